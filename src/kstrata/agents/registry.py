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

NAMES = ("builtin", "llm", "hierarchical")


def make_proposer(name: str, *, backend: Any, llm: str | None = None, record: Path | None = None,
                  config: Path | None = None, ablations: Any = None, memory: Path | None = None) -> Any:
    """Build the proposer called ``name`` for ``backend``.

    ``ablations`` (``hierarchical`` only): ``--ablate`` names such as
    ``"flat,no-memory"`` or a mapping of
    :class:`kstrata.agents.hierarchical.Ablations` fields; ``memory``: the
    memory database (default ``$KSTRATA_MEMORY_DB`` or ``~/.cache/kstrata/memory.db``).

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
        from kstrata.agents.builtin import for_backend

        rules = for_backend(backend)
        if rules is None:
            raise OptionError(
                f"the builtin proposer has rules for the tvm-*, triton* and tilelang-* backends, not "
                f"{backend.name}; use --proposer llm --llm PROVIDER:MODEL"
            )
        return rules
    check_llm_options(name, llm, config, ablations)
    if name == "llm":
        from kstrata.agents.llm_agent import LLMProposer
        from kstrata.config import load_config
        from kstrata.llm import CallLog, make_provider

        cfg = load_config(config, cli={"llm.default": llm, "llm.record": str(record) if record else None})
        log = CallLog()
        provider = make_provider(None, cfg, accounting=log)
        return LLMProposer(provider, log, backend=backend)
    if name == "hierarchical":
        return _hierarchical(backend, llm, record, config, ablations, memory)
    raise OptionError(f"unknown --proposer {name!r}; choose one of {', '.join(NAMES)}")


def check_llm_options(name: str, llm: str | None, config: Path | None, ablations: Any = None) -> None:
    """Refuse what :func:`make_proposer` would refuse in its options' text
    alone (make_proposer calls it first), before the command loads the task,
    the backend and its start (lead's option battery, 2026-12-06: ``--llm bogus:x``, ``--proposer llm``
    without ``--llm`` and ``--baselines bogus`` were said after 2-3 minutes of
    that work on a busy machine). Makes no request and builds no client.

    Raises
    ------
    OptionError
        For ``llm`` without ``--llm`` (or a configured default), or a bad
        ``--ablate`` text.
    kstrata.llm.ProviderError
        For a provider text that names no provider (:meth:`kstrata.llm.spec.ProviderSpec.parse`).
    """
    if name not in ("llm", "hierarchical"):
        return
    from kstrata.config import load_config
    from kstrata.llm.spec import ProviderSpec

    if name == "hierarchical":
        from kstrata.agents.ablations import Ablations

        try:
            Ablations.parse(ablations)
        except ValueError as e:
            raise OptionError(f"--ablate: {e}") from None
    cfg = load_config(config, cli={"llm.default": llm})
    text = llm or cfg.llm.default
    if text is None:
        if name == "llm":
            raise OptionError("--proposer llm needs --llm PROVIDER:MODEL (or llm.default in kstrata.toml)")
        return  # hierarchical without an LLM: the built-in rules behind the router
    ProviderSpec.parse(text, cfg)


def _hierarchical(backend: Any, llm: str | None, record: Path | None, config: Path | None,
                  ablations: Any, memory: Path | None) -> Any:
    """Graph/schedule/source LLM roles when an LLM is configured, else the
    built-in rules behind the same router, scope checks, rebuild and memory."""
    from kstrata.agents.hierarchical import Ablations, HierarchicalProposer, LevelAgent
    from kstrata.agents.memory import MemoryStore, default_path
    from kstrata.config import load_config

    abl = Ablations.parse(ablations)  # its text was checked by check_llm_options
    from kstrata.agents.builtin import for_backend

    rules = for_backend(backend)
    cfg = load_config(config, cli={"llm.default": llm, "llm.record": str(record) if record else None})
    agents = {}
    if llm is not None or cfg.llm.default:
        from kstrata.llm import CallLog, make_provider

        log = CallLog()
        provider = make_provider(None, cfg, accounting=log)
        agents = {lv: LevelAgent(provider, log, "single" if abl.flat else lv) for lv in backend.levels}
    elif rules is None:
        raise OptionError(f"--proposer hierarchical on {backend.name} needs --llm PROVIDER:MODEL "
                          "(no built-in rules for this backend)")
    store = MemoryStore(memory or default_path()) if abl.memory else None
    return HierarchicalProposer(backend, agents=agents, rules=rules, memory=store, ablations=abl)
