"""OpenAI-compatible chat completions through the official ``openai`` SDK.

Works with any server that speaks ``POST {base_url}/chat/completions``: OpenAI,
vLLM, SGLang, Ollama, llama.cpp's server, DeepSeek, GLM, Qwen, OpenRouter. The
base URL comes from the config, else ``$OPENAI_BASE_URL``; the key from
``$OPENAI_API_KEY`` (or the variable the config names). The SDK's own retries
are off; :mod:`kstrata.llm.retry` retries instead, so every retry is counted.
"""

from __future__ import annotations

import time
from typing import Any

import openai

from kstrata.llm.base import Completion
from kstrata.llm.remote import RemoteProvider


class OpenAIProvider(RemoteProvider):
    """An OpenAI-compatible chat-completions endpoint. See :class:`RemoteProvider`."""

    kind = "openai"
    default_key_env = "OPENAI_API_KEY"
    default_url_env = "OPENAI_BASE_URL"
    sdk_client = openai.OpenAI
    default_url = "https://api.openai.com/v1"

    def _token_param(self) -> str:
        # api.openai.com deprecated ``max_tokens`` for ``max_completion_tokens``;
        # most compatible servers only know ``max_tokens``.
        return "max_completion_tokens" if "api.openai.com" in self.base_url else "max_tokens"

    def _call_once(self, messages, params, req_hash) -> Completion:  # type: ignore[no-untyped-def]
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            self._token_param(): params["max_tokens"],
            "temperature": params["temperature"],
        }
        if params["stop"]:
            kwargs["stop"] = params["stop"]
        t0 = time.perf_counter()
        resp = self.client.chat.completions.create(**kwargs)
        latency = time.perf_counter() - t0
        choice = resp.choices[0] if resp.choices else None
        text = (choice.message.content if choice and choice.message else None) or ""
        return self._completion(
            text,
            getattr(resp.usage, "prompt_tokens", 0),
            getattr(resp.usage, "completion_tokens", 0),
            latency,
            resp.model,
            choice.finish_reason if choice else None,
            req_hash,
        )

    def _list_models(self) -> list[str]:
        return [m.id for m in self.client.models.list()]

    def _probe(self) -> None:
        self.client.chat.completions.create(
            model=self.model,
            messages=[{"role": "user", "content": "ping"}],
            **{self._token_param(): 1},
        )
