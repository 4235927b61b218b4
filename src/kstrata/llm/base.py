"""The Provider protocol: one chat completion in, one :class:`Completion` out.

Every provider (OpenAI-compatible, Anthropic, queue, replay, recording) exposes
the same three calls:

- ``complete(messages, *, max_tokens, temperature, stop) -> Completion``
- ``complete_many(requests) -> list[Completion | ProviderError]`` (bounded
  parallelism: at most ``concurrency`` calls in flight, errors as data)
- ``check()`` -- a preflight that raises :class:`ProviderError` with one clear
  message when the provider is misconfigured or unreachable, before any budget
  is spent.

:class:`BaseProvider` holds the shared machinery: request hashing, retries with
backoff (:mod:`kstrata.llm.retry`), the concurrency semaphore, timing and the
accounting callback. Subclasses implement :meth:`BaseProvider._call_once`.

A *message* is ``{"role": "system" | "user" | "assistant", "content": str}``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from kstrata.surrogates import SURROGATE, without_lone_surrogates

Message = Mapping[str, str]

ROLES = ("system", "user", "assistant")


class ProviderError(Exception):
    """A provider call or preflight that failed; the message says what to do.

    Attributes
    ----------
    provider:
        The provider's label, e.g. ``"openai:gpt-4o"``.
    kind:
        ``"config"`` (misconfigured: missing key, unknown model, bad URL),
        ``"unreachable"``, ``"timeout"``, ``"rate_limit"``, ``"server"``,
        ``"rejected"`` (the API refused the request), ``"replay_miss"``.
    attempts:
        How many attempts were made before giving up.
    status:
        The HTTP status of a request the server refused (``"rejected"``), else ``None``.
    """

    def __init__(self, message: str, *, provider: str = "", kind: str = "error", attempts: int = 1,
                 status: int | None = None):
        super().__init__(message)
        self.provider = provider
        self.kind = kind
        self.attempts = attempts
        self.status = status


class ProviderTimeout(ProviderError):
    """The per-request timeout fired (on every allowed attempt)."""


@dataclass(frozen=True)
class Completion:
    """One model answer.

    Attributes
    ----------
    text:
        The answer's text (all text content blocks joined).
    input_tokens, output_tokens:
        Token counts as reported by the API (the queue provider estimates
        ``ceil(chars / 4)`` unless the responder reports them).
    cost_usd:
        ``input_tokens * price_in + output_tokens * price_out`` in US dollars,
        from the configured prices (0 when no price is configured).
    latency_s:
        Wall-clock seconds of the successful attempt (replay: as recorded).
    model:
        The model that answered, as the API names it.
    provider:
        The provider label (``"openai:gpt-4o"``, ``"anthropic:..."``, ``"queue:DIR"``).
    raw_finish_reason:
        The API's stop reason as given (``"stop"``, ``"length"``,
        ``"end_turn"``, ``"max_tokens"``, ...); :attr:`truncated` normalises it.
    attempts:
        Attempts used, 1 when no retry was needed.
    request_hash:
        :func:`request_hash` of the request that produced it.
    """

    text: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    model: str
    provider: str
    raw_finish_reason: str | None = None
    attempts: int = 1
    request_hash: str = ""

    @property
    def truncated(self) -> bool:
        """True when the answer stopped at the token limit."""
        return (self.raw_finish_reason or "").lower() in ("length", "max_tokens", "max_output_tokens")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Request:
    """The arguments of one :meth:`Provider.complete` call (for ``complete_many``)."""

    messages: tuple[Message, ...]
    max_tokens: int | None = None
    temperature: float | None = None
    stop: tuple[str, ...] | None = None


@dataclass(frozen=True)
class CallRecord:
    """What the accounting callback receives after every call, success or not.

    ``retries`` describes each failed attempt that was retried (e.g.
    ``"429 rate limited; waited 1.0 s"``); ``completion`` is None and ``error``
    set when the call failed. The API key is never part of a record.
    """

    provider: str
    model: str
    request_hash: str
    messages: tuple[Message, ...]
    params: Mapping[str, Any]
    completion: Completion | None
    error: str | None
    attempts: int
    retries: tuple[str, ...] = ()
    started_at: float = 0.0

    # The fields of kstrata.agents.base.ProposerCall, so the run store takes a
    # CallRecord as a proposer call as it is.
    @property
    def prompt(self) -> str:
        """The messages as Markdown, each after ``<!-- kstrata: role=ROLE -->``."""
        return render_markdown(self.messages)

    @property
    def response(self) -> str:
        return self.completion.text if self.completion else ""

    @property
    def tokens_in(self) -> int:
        return self.completion.input_tokens if self.completion else 0

    @property
    def tokens_out(self) -> int:
        return self.completion.output_tokens if self.completion else 0

    @property
    def cost_usd(self) -> float:
        return self.completion.cost_usd if self.completion else 0.0

    @property
    def latency_s(self) -> float:
        return self.completion.latency_s if self.completion else 0.0


#: The accounting hook a caller passes (the run store records calls, tokens, cost).
Accounting = Callable[[CallRecord], None]


def tee(*hooks: Accounting | None) -> Accounting | None:
    """One hook that calls each of ``hooks`` (Nones skipped) in order."""
    live = [h for h in hooks if h is not None]
    if len(live) <= 1:
        return live[0] if live else None

    def both(record: CallRecord) -> None:
        for h in live:
            h(record)

    return both


class CallLog:
    """An :data:`Accounting` hook that keeps every :class:`CallRecord`.

    An agent hands ``log.take()`` -- the records since its last take -- to the
    run store as the proposer calls of one expansion.
    """

    def __init__(self) -> None:
        self.records: list[CallRecord] = []
        self._taken = 0
        self._lock = threading.Lock()

    def __call__(self, record: CallRecord) -> None:
        with self._lock:
            self.records.append(record)

    def take(self) -> list[CallRecord]:
        """Records added since the previous ``take()``."""
        with self._lock:
            out = self.records[self._taken :]
            self._taken = len(self.records)
        return out


@dataclass
class UsageTotals:
    """A thread-safe :data:`Accounting` that sums what was spent.

    Attributes are totals over all calls seen: ``calls`` (successful),
    ``failed_calls``, ``attempts`` (HTTP requests made, retries included),
    ``retries``, tokens in/out, ``cost_usd`` and ``latency_s`` (seconds).
    """

    calls: int = 0
    failed_calls: int = 0
    attempts: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __call__(self, record: CallRecord) -> None:
        with self._lock:
            self.attempts += record.attempts
            self.retries += len(record.retries)
            c = record.completion
            if c is None:
                self.failed_calls += 1
                return
            self.calls += 1
            self.input_tokens += c.input_tokens
            self.output_tokens += c.output_tokens
            self.cost_usd += c.cost_usd
            self.latency_s += c.latency_s


def render_markdown(messages: Sequence[Message], header: str = "") -> str:
    """Messages as Markdown, each after a ``<!-- kstrata: role=ROLE -->`` line."""
    parts = [header] if header else []
    for m in messages:
        parts.append(f"<!-- kstrata: role={m['role']} -->\n\n{m['content'].rstrip()}\n")
    return "\n".join(parts)


def normalize_messages(messages: Sequence[Message]) -> tuple[dict[str, str], ...]:
    """Validate ``messages`` and return them as plain ``{"role", "content"}`` dicts.

    Raises
    ------
    ValueError
        If a message lacks a known role or string content, or there is no
        user message.
    """
    out = []
    for i, m in enumerate(messages):
        role, content = m.get("role"), m.get("content")
        if role not in ROLES or not isinstance(content, str):
            raise ValueError(
                f"message {i} must be {{'role': one of {ROLES}, 'content': str}}, got {dict(m)!r:.200}"
            )
        out.append({"role": role, "content": content})
    if not any(m["role"] == "user" for m in out):
        raise ValueError("a request needs at least one user message")
    return tuple(out)


def request_params(
    max_tokens: int | None, temperature: float | None, stop: Sequence[str] | None
) -> dict[str, Any]:
    """The generation parameters of a request in canonical form (hashed, recorded)."""
    return {
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stop": list(stop) if stop else None,
    }


def request_hash(messages: Sequence[Message], params: Mapping[str, Any]) -> str:
    """sha256 over the canonical JSON of messages and generation parameters.

    ``params`` are the parameters the caller passed explicitly (None where the
    provider's default applies), and the provider and model are left out, so a
    cassette recorded from any provider replays under ``replay:FILE`` whatever
    defaults that provider was configured with.
    """
    payload = {"messages": [dict(m) for m in messages], "params": dict(params)}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


@runtime_checkable
class Provider(Protocol):
    """What the optimizer calls. See the module docstring."""

    label: str
    concurrency: int

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] | None = None,
    ) -> Completion: ...

    def complete_many(
        self, requests: Sequence[Request], *, max_workers: int | None = None
    ) -> list[Completion | ProviderError]: ...

    def check(self) -> None: ...


def complete_many(
    provider: Provider, requests: Sequence[Request], *, max_workers: int | None = None
) -> list[Completion | ProviderError]:
    """Run ``requests`` on ``provider`` in up to ``max_workers`` threads.

    Parameters
    ----------
    max_workers:
        Parallel calls; defaults to ``provider.concurrency``. The provider's own
        semaphore still bounds calls in flight across all callers.

    Returns
    -------
    list
        One entry per request, in order: the :class:`Completion`, or the
        :class:`ProviderError` that call ended with (errors are data here).
    """
    if not requests:
        return []
    n = max(1, min(len(requests), max_workers or provider.concurrency))

    def one(r: Request) -> Completion | ProviderError:
        try:
            return provider.complete(
                r.messages, max_tokens=r.max_tokens, temperature=r.temperature, stop=r.stop
            )
        except ProviderError as e:
            return e

    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="kstrata-llm") as pool:
        return list(pool.map(one, requests))


class BaseProvider:
    """Shared machinery of the providers. Subclasses implement :meth:`_call_once`.

    Parameters
    ----------
    label:
        ``"kind:model"`` shown in messages and records.
    model:
        Model name sent to the API.
    max_tokens, temperature:
        Defaults for calls that do not pass them.
    concurrency:
        Calls in flight at once (a semaphore across all threads).
    price_in, price_out:
        US dollars per input / output token.
    accounting:
        Called with a :class:`CallRecord` after every call.
    retry:
        A :class:`kstrata.llm.retry.RetryPolicy`; None means no retries.
    """

    kind = "base"

    def __init__(
        self,
        label: str,
        model: str,
        *,
        max_tokens: int = 4096,
        temperature: float = 0.0,
        concurrency: int = 1,
        price_in: float = 0.0,
        price_out: float = 0.0,
        accounting: Accounting | None = None,
        retry: Any = None,
    ) -> None:
        self.label = label
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.concurrency = max(1, int(concurrency))
        self.price_in = price_in
        self.price_out = price_out
        self.accounting = accounting
        self.retry = retry
        self._sem = threading.BoundedSemaphore(self.concurrency)

    # -- subclass hooks ----------------------------------------------------
    def _call_once(
        self,
        messages: tuple[dict[str, str], ...],
        params: dict[str, Any],
        req_hash: str,
    ) -> Completion:
        """One attempt; raise the SDK's own exceptions (the retry policy maps them)."""
        raise NotImplementedError

    def check(self) -> None:
        """Preflight; the default accepts. Raises :class:`ProviderError`."""

    def _with_retries(self, fn: Callable[[], Completion], retries: list[str]) -> Completion:
        """Run one call under :attr:`retry` (or once when there is none)."""
        if self.retry is None:
            return fn()
        return self.retry.run(fn, self.label, retries)

    # -- public ------------------------------------------------------------
    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """US dollars for the given token counts at the configured prices."""
        return input_tokens * self.price_in + output_tokens * self.price_out

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        """Ask the model; retries transient failures.

        Raises
        ------
        ProviderError
            When every allowed attempt failed (``ProviderTimeout`` for timeouts),
            or on a non-retryable API error; the message names the provider and
            the cause.
        ValueError
            On malformed ``messages`` (a bug in the caller).
        """
        msgs = normalize_messages(messages)
        h = request_hash(msgs, request_params(max_tokens, temperature, stop))
        params = request_params(
            self.max_tokens if max_tokens is None else max_tokens,
            self.temperature if temperature is None else temperature,
            stop,
        )
        retries: list[str] = []
        started = time.time()
        completion: Completion | None = None
        error: ProviderError | None = None
        with self._sem:
            try:
                completion = self._with_retries(lambda: self._call_once(msgs, params, h), retries)
            except ProviderError as e:
                error = e
        attempts = len(retries) + 1
        if completion is not None and SURROGATE.search(completion.text):  # a reply's "\ud800" (red-team rt57)
            completion = _replace(completion, text=without_lone_surrogates(completion.text))
        if completion is not None and retries:
            completion = _replace(completion, attempts=attempts)
        elif completion is not None:
            attempts = completion.attempts
        if self.accounting is not None:
            self.accounting(
                CallRecord(
                    # a provider may qualify its own label per answer (replay: "closest recorded prompt")
                    provider=(completion.provider if completion is not None
                              and completion.provider.startswith(self.label + " ") else self.label),
                    model=self.model,
                    request_hash=h,
                    messages=msgs,
                    params=params,
                    completion=completion,
                    error=None if error is None else str(error),
                    attempts=attempts,
                    retries=tuple(retries),
                    started_at=started,
                )
            )
        if error is not None:
            raise error
        assert completion is not None
        return completion

    def complete_many(
        self, requests: Sequence[Request], *, max_workers: int | None = None
    ) -> list[Completion | ProviderError]:
        """See :func:`complete_many`."""
        return complete_many(self, requests, max_workers=max_workers)


def _replace(c: Completion, **kw: Any) -> Completion:
    d = c.to_dict()
    d.update(kw)
    return Completion(**d)
