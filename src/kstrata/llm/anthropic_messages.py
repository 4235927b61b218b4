"""Anthropic's messages API through the official ``anthropic`` SDK.

System messages become the ``system`` parameter; the rest alternate user /
assistant as given. Base URL from the config, else ``$ANTHROPIC_BASE_URL``
(Anthropic-compatible endpoints of other vendors work too); the key from
``$ANTHROPIC_API_KEY`` (or the variable the config names). The SDK's own
retries are off; :mod:`kstrata.llm.retry` retries instead.
"""

from __future__ import annotations

import inspect
import time
from typing import Any

import anthropic
from anthropic.resources.messages import Messages

from kstrata.llm.base import Completion
from kstrata.llm.remote import RemoteProvider

#: Recent SDKs (2.x) dropped ``temperature`` from ``messages.create``; it is
#: sent only where the installed SDK still takes it.
_SDK_TAKES_TEMPERATURE = "temperature" in inspect.signature(Messages.create).parameters


class AnthropicProvider(RemoteProvider):
    """An Anthropic messages endpoint. See :class:`RemoteProvider`."""

    kind = "anthropic"
    default_key_env = "ANTHROPIC_API_KEY"
    default_url_env = "ANTHROPIC_BASE_URL"
    sdk_client = anthropic.Anthropic
    default_url = "https://api.anthropic.com"

    def _call_once(self, messages, params, req_hash) -> Completion:  # type: ignore[no-untyped-def]
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": params["max_tokens"],
            "messages": [m for m in messages if m["role"] != "system"],
        }
        if _SDK_TAKES_TEMPERATURE:
            kwargs["temperature"] = params["temperature"]
        if system:
            kwargs["system"] = system
        if params["stop"]:
            kwargs["stop_sequences"] = params["stop"]
        t0 = time.perf_counter()
        resp = self.client.messages.create(**kwargs)
        latency = time.perf_counter() - t0
        text = "".join(
            getattr(b, "text", "") for b in (resp.content or []) if getattr(b, "type", "") == "text"
        )
        return self._completion(
            text,
            getattr(resp.usage, "input_tokens", 0),
            getattr(resp.usage, "output_tokens", 0),
            latency,
            resp.model,
            resp.stop_reason,
            req_hash,
        )

    def _list_models(self) -> list[str]:
        return [m.id for m in self.client.models.list()]

    def _probe(self) -> None:
        self.client.messages.create(
            model=self.model, max_tokens=1, messages=[{"role": "user", "content": "ping"}]
        )
