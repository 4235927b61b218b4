"""LLM providers: OpenAI-compatible, Anthropic, queue (files), replay (cassette).

Typical use (the optimizer)::

    from kstrata.llm import make_provider, UsageTotals
    provider = make_provider("openai:gpt-4o", config, record=None, accounting=store_hook)
    completion = provider.complete(messages, max_tokens=8192)

See :mod:`kstrata.llm.base` for the protocol, :mod:`kstrata.llm.file_queue`
for the queue's file protocol and :mod:`kstrata.llm.cassette` for the
cassette format.
"""

from kstrata.llm.base import (
    Accounting,
    BaseProvider,
    CallLog,
    CallRecord,
    Completion,
    Message,
    Provider,
    ProviderError,
    ProviderTimeout,
    Request,
    UsageTotals,
    complete_many,
    request_hash,
    tee,
)
from kstrata.llm.spec import ProviderSpec, make_provider

__all__ = [
    "Accounting",
    "BaseProvider",
    "CallLog",
    "CallRecord",
    "Completion",
    "Message",
    "Provider",
    "ProviderError",
    "ProviderSpec",
    "ProviderTimeout",
    "Request",
    "UsageTotals",
    "complete_many",
    "make_provider",
    "request_hash",
    "tee",
]
