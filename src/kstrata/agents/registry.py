"""Proposers by name, as ``kstrata optimize --proposer`` and ``kstrata bench``
select them.

``builtin``: the deterministic, rule-based proposer of the backend family
(no LLM); ``llm``: the single-role LLM agent with ``--llm PROVIDER``;
``hierarchical``: graph, schedule and source agents behind a router.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kstrata.cli.errors import OptionError

NAMES = ("builtin", "llm")


def make_proposer(name: str, *, backend: Any, llm: str | None = None, record: Path | None = None,
                  config: Path | None = None) -> Any:
    """Build the proposer called ``name`` for ``backend``.

    Raises
    ------
    OptionError
        For an unknown name, ``llm`` without ``--llm`` (or a configured
        default), or ``builtin`` on a backend that has no rule library.
    kstrata.llm.ProviderError
        When the LLM provider is misconfigured or unreachable (checked here,
        before any budget is spent).
    """
    if name == "builtin":
        if backend.name.startswith("tvm-"):
            from kstrata.agents.builtin import TVMRulesProposer

            return TVMRulesProposer(backend)
        raise OptionError(
            f"the builtin proposer has rules for the tvm-* backends only, not {backend.name}; "
            "use --proposer llm --llm PROVIDER:MODEL"
        )
    if name == "llm":
        from kstrata.agents.llm_agent import LLMProposer
        from kstrata.config import load_config
        from kstrata.llm import CallLog, make_provider

        cfg = load_config(config, cli={"llm.default": llm, "llm.record": str(record) if record else None})
        if llm is None and not cfg.llm.default:
            raise OptionError("--proposer llm needs --llm PROVIDER:MODEL (or llm.default in kstrata.toml)")
        log = CallLog()
        provider = make_provider(None, cfg, accounting=log)
        return LLMProposer(provider, log)
    raise OptionError(f"unknown --proposer {name!r}; choose one of {', '.join(NAMES)}")
