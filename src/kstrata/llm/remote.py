"""What the HTTP providers share: key lookup, base URL, timeout, retry policy
and the preflight (list models, else a one-token request)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from kstrata.llm.base import BaseProvider, Completion, ProviderError
from kstrata.llm.retry import RetryPolicy
from kstrata.llm.secrets import MissingKeyError, api_key


class RemoteProvider(BaseProvider):
    """Base of :class:`~kstrata.llm.openai_chat.OpenAIProvider` and
    :class:`~kstrata.llm.anthropic_messages.AnthropicProvider`.

    Parameters
    ----------
    model:
        Model name sent to the API.
    base_url:
        API root; None falls back to ``$<default_url_env>`` then ``default_url``.
    api_key_env:
        Environment variable holding the key; None uses ``default_key_env``;
        ``""`` sends a placeholder (servers without authentication).
    timeout_s:
        Per-request timeout in seconds (the SDK's own timeout).
    max_retries:
        Retries after the first attempt (see :mod:`kstrata.llm.retry`).
    **kw:
        Passed to :class:`~kstrata.llm.base.BaseProvider`.

    Raises
    ------
    ProviderError
        (kind ``config``) when the key's environment variable is unset.
    """

    kind = "remote"
    #: The SDK's client class (``openai.OpenAI``, ``anthropic.Anthropic``).
    sdk_client: Any = None
    default_key_env = ""
    default_url_env = ""
    default_url = ""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        timeout_s: float = 600.0,
        max_retries: int = 5,
        retry: RetryPolicy | None = None,
        **kw: Any,
    ) -> None:
        if not model:
            raise ProviderError(f"{self.kind}: no model given (use {self.kind}:MODEL)", kind="config")
        super().__init__(
            f"{self.kind}:{model}",
            model,
            retry=retry or RetryPolicy(max_attempts=max_retries + 1),
            **kw,
        )
        self.base_url = (
            base_url or os.environ.get(self.default_url_env) or self.default_url
        ).rstrip("/")
        self.timeout_s = timeout_s
        var = self.default_key_env if api_key_env is None else api_key_env
        self.key_env = var
        try:
            key = api_key(var) if var else "no-key"
        except MissingKeyError as e:
            raise ProviderError(
                f"{self.label}: {e}; export it, or set api_key_env = \"\" for a server "
                "without authentication",
                provider=self.label,
                kind="config",
            ) from None
        self.client = self._make_client(key)

    # -- subclass hooks ----------------------------------------------------
    def _make_client(self, key: str) -> Any:
        # the SDK's own retries are off: RetryPolicy retries, so each is counted
        return self.sdk_client(
            api_key=key, base_url=self.base_url, timeout=self.timeout_s, max_retries=0
        )

    def _list_models(self) -> list[str]:
        raise NotImplementedError

    def _probe(self) -> None:
        """A minimal (one output token) request."""
        raise NotImplementedError

    # -- shared ------------------------------------------------------------
    def _completion(
        self, text: str, tin: Any, tout: Any, latency: float, model: str | None,
        finish: str | None, req_hash: str,
    ) -> Completion:
        tin, tout = int(tin or 0), int(tout or 0)
        return Completion(
            text=text, input_tokens=tin, output_tokens=tout, cost_usd=self.cost(tin, tout),
            latency_s=latency, model=model or self.model, provider=self.label,
            raw_finish_reason=finish, request_hash=req_hash,
        )

    def _with_retries(self, fn: Callable[[], Completion], retries: list[str]) -> Completion:
        assert self.retry is not None
        return self.retry.run(fn, self.label, retries, timeout_s=self.timeout_s, where=self.base_url)

    def check(self) -> None:
        """List the server's models (or, where listing is not offered, make a
        one-token request) and require :attr:`model` among them.

        Raises
        ------
        ProviderError
            With one message: unreachable server, rejected key, unknown model.
        """
        once = RetryPolicy(max_attempts=1)
        try:
            models = once.run(self._list_models, self.label, [], where=self.base_url)
        except ProviderError as e:
            if e.status not in (404, 405):  # by status, not by text: a base URL's port may read "40451"
                raise self._explain(e) from None
            models = None
        if models is None:
            try:
                once.run(self._probe, self.label, [], timeout_s=self.timeout_s, where=self.base_url)
            except ProviderError as e:
                raise self._explain(e) from None
            return
        served = any(m == self.model or m.startswith(self.model + "-") for m in models)
        if models and not served:  # an alias (claude-x) may name a dated id (claude-x-2025...)
            shown = ", ".join(sorted(models)[:12]) + (" ..." if len(models) > 12 else "")
            raise ProviderError(
                f"{self.label}: model {self.model!r} is not served at {self.base_url} "
                f"(it serves: {shown})",
                provider=self.label,
                kind="config",
            )

    def _explain(self, e: ProviderError) -> ProviderError:
        text = str(e)
        if "401" in text or "403" in text:
            text += f"; check the key in ${self.key_env}" if self.key_env else "; the server wants a key"
        return ProviderError(text, provider=self.label, kind=e.kind, attempts=e.attempts, status=e.status)

