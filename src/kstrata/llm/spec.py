"""Provider specs: ``openai:MODEL``, ``anthropic:MODEL``, ``queue:DIR``,
``replay:FILE`` or the name of a provider in the config, turned into a
ready :class:`~kstrata.llm.base.Provider`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kstrata.config import Config, ProviderConfig
from kstrata.llm.base import Accounting, Provider, ProviderError, tee

KINDS = ("openai", "anthropic", "queue", "replay")

#: Timeout when the config sets none: HTTP providers / a queue (a person answers).
DEFAULT_TIMEOUT_S = {"openai": 600.0, "anthropic": 600.0, "queue": 24 * 3600.0, "replay": 1.0}


@dataclass(frozen=True)
class ProviderSpec:
    """A parsed provider choice.

    Attributes
    ----------
    kind:
        One of :data:`KINDS`.
    target:
        The model (openai, anthropic) or the path (queue, replay).
    settings:
        The provider's settings (the named config entry, or defaults).
    name:
        The config name it came from, or None for an inline spec.
    """

    kind: str
    target: str
    settings: ProviderConfig
    name: str | None = None

    @classmethod
    def parse(cls, text: str, config: Config | None = None) -> "ProviderSpec":
        """Parse ``text``; a config name wins over the inline syntax.

        Raises
        ------
        ProviderError
            (kind ``config``) for an unknown name or kind, or an empty target.
        """
        providers = config.llm.providers if config is not None else {}
        text = text.strip()
        if text in providers:
            s = providers[text]
            target = s.model if s.kind in ("openai", "anthropic") else (s.path or "")
            if not target:
                need = "model" if s.kind in ("openai", "anthropic") else "path"
                raise ProviderError(
                    f"provider {text!r} in the config has no {need}", provider=text, kind="config"
                )
            return cls(s.kind, target, s, name=text)
        kind, sep, target = text.partition(":")
        if not sep or kind not in KINDS:
            names = f"; configured names: {', '.join(sorted(providers))}" if providers else ""
            raise ProviderError(
                f"unknown LLM provider {text!r}: use openai:MODEL, anthropic:MODEL, queue:DIR, "
                f"replay:FILE or a provider name from kstrata.toml{names}",
                provider=text,
                kind="config",
            )
        if not target:
            what = "MODEL" if kind in ("openai", "anthropic") else ("DIR" if kind == "queue" else "FILE")
            raise ProviderError(f"{text!r}: missing {what} after '{kind}:'", provider=text, kind="config")
        if kind in ("openai", "anthropic"):
            settings = ProviderConfig(kind=kind, model=target)
        else:
            settings = ProviderConfig(kind=kind, path=target)
        return cls(kind, target, settings)

    def build(
        self, *, accounting: Accounting | None = None, record: str | Path | None = None
    ) -> Provider:
        """Construct the provider (no request is made; call ``check()`` for that).

        Parameters
        ----------
        accounting:
            Called with a :class:`~kstrata.llm.base.CallRecord` after every call.
        record:
            Cassette to append every exchange to (``--record FILE``).

        Raises
        ------
        ProviderError
            When the provider cannot be set up (e.g. its key variable is unset,
            or a cassette to replay is missing).
        """
        s = self.settings
        if record is not None:
            from kstrata.llm.cassette import CassetteWriter

            accounting = tee(accounting, CassetteWriter(record))
        common = dict(
            max_tokens=s.max_tokens,
            temperature=s.temperature,
            concurrency=s.concurrency,
            price_in=s.usd_per_mtok_in / 1e6,
            price_out=s.usd_per_mtok_out / 1e6,
            accounting=accounting,
        )
        timeout = s.timeout_s if s.timeout_s is not None else DEFAULT_TIMEOUT_S[self.kind]
        provider: Provider
        if self.kind == "openai":
            from kstrata.llm.openai_chat import OpenAIProvider

            provider = OpenAIProvider(
                self.target, base_url=s.base_url, api_key_env=s.api_key_env,
                timeout_s=timeout, max_retries=s.max_retries, **common,
            )
        elif self.kind == "anthropic":
            from kstrata.llm.anthropic_messages import AnthropicProvider

            provider = AnthropicProvider(
                self.target, base_url=s.base_url, api_key_env=s.api_key_env,
                timeout_s=timeout, max_retries=s.max_retries, **common,
            )
        elif self.kind == "queue":
            from kstrata.llm.file_queue import QueueProvider

            provider = QueueProvider(self.target, timeout_s=timeout, poll_s=s.poll_s, settle_s=s.settle_s,
                                     **common)
        else:
            from kstrata.llm.cassette import ReplayProvider

            provider = ReplayProvider(self.target, **common)
        return provider


def make_provider(
    spec: str | ProviderSpec | None = None,
    config: Config | None = None,
    *,
    record: str | Path | None = None,
    accounting: Accounting | None = None,
    check: bool = True,
) -> Provider:
    """The provider a run uses, checked before any budget is spent.

    Parameters
    ----------
    spec:
        ``--llm`` value; None uses ``config.llm.default``.
    config:
        Resolved configuration (:func:`kstrata.config.load_config`).
    record:
        ``--record FILE``; None uses ``config.llm.record``.
    accounting:
        Usage callback (the run store's recorder).
    check:
        Run the preflight (:meth:`Provider.check`).

    Raises
    ------
    ProviderError
        With one clear message when no provider is chosen, the spec is unknown,
        or the preflight fails (unreachable, rejected key, unknown model).
    """
    if spec is None:
        spec = config.llm.default if config is not None else None
        if not spec:
            raise ProviderError(
                "no LLM provider chosen: pass --llm openai:MODEL (or anthropic:MODEL, "
                "queue:DIR, replay:FILE) or set llm.default in kstrata.toml",
                kind="config",
            )
    if isinstance(spec, str):
        spec = ProviderSpec.parse(spec, config)
    if record is None and config is not None and config.llm.record:
        record = config.llm.record
    provider = spec.build(accounting=accounting, record=record)
    if check:
        provider.check()
    return provider
