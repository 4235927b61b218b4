"""Retries with exponential backoff for the HTTP providers (tenacity).

Retried: 429 (rate limit), 408/409, every 5xx (529 "overloaded" included),
connection failures and per-request timeouts. Not retried: other 4xx (bad
request, authentication, unknown model), which cannot get better by waiting.

Wait before retry ``n`` (1-based): the server's ``Retry-After`` /
``retry-after-ms`` when it sends one (capped at ``max_wait_s``), otherwise
``min(max_wait_s, initial_wait_s * 2**(n-1))`` scaled by a random factor in
[0.5, 1) ("full jitter" halved, as in AWS's "Exponential Backoff and Jitter",
2015), so parallel workers do not retry in lockstep.

The SDK exceptions are classified by duck typing (``status_code``, the class
names ``APITimeoutError``/``APIConnectionError``), which holds for both the
``openai`` and ``anthropic`` SDKs; anything else is a bug and propagates.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import tenacity

from kstrata.llm.base import ProviderError, ProviderTimeout
from kstrata.llm.secrets import redact

T = TypeVar("T")


@dataclass(frozen=True)
class Failure:
    """A classified failed attempt."""

    kind: str  # timeout | unreachable | rate_limit | server | rejected
    retryable: bool
    retry_after_s: float | None
    text: str
    status: int | None = None  # the HTTP status, where the server answered


def _mro_names(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an
    HTTP date, RFC 9110 section 10.2.3), or None when absent or unparsable."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
    except Exception:  # noqa: BLE001 - header objects of unknown type
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def classify(exc: BaseException) -> Failure | None:
    """Classify an SDK exception; None when it is not an API failure."""
    names = _mro_names(exc)
    if "APITimeoutError" in names:
        return Failure("timeout", True, None, "request timed out")
    if "APIConnectionError" in names:
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {cause})" if cause else ""
        return Failure("unreachable", True, None, f"cannot connect{detail}")
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        response = getattr(exc, "response", None)
        after = retry_after_seconds(getattr(response, "headers", None))
        short = _short_body(exc)
        if status == 429:
            return Failure("rate_limit", True, after, f"429 rate limited{short}")
        if status >= 500:
            return Failure("server", True, after, f"{status} server error{short}")
        if status in (408, 409):
            return Failure("server", True, after, f"{status}{short}")
        return Failure("rejected", False, None, f"{status} {type(exc).__name__}{short}", status)
    return None


def _short_body(exc: BaseException) -> str:
    msg = redact(str(getattr(exc, "message", "") or "").strip())
    return f": {msg[:300]}" if msg else ""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry.

    Attributes
    ----------
    max_attempts:
        Attempts in total (1 = no retry).
    initial_wait_s, max_wait_s:
        Backoff base and cap in seconds; ``max_wait_s`` also caps Retry-After.
    """

    max_attempts: int = 6
    initial_wait_s: float = 1.0
    max_wait_s: float = 60.0

    def wait_s(self, attempt: int, failure: Failure | None) -> float:
        """Seconds to sleep after failed attempt number ``attempt`` (1-based)."""
        if failure is not None and failure.retry_after_s is not None:
            return min(self.max_wait_s, failure.retry_after_s)
        base = min(self.max_wait_s, self.initial_wait_s * 2 ** (attempt - 1))
        return base * (0.5 + random.random() / 2)

    def run(
        self,
        fn: Callable[[], T],
        label: str,
        retries: list[str],
        *,
        timeout_s: float | None = None,
        where: str = "",
    ) -> T:
        """Call ``fn`` until it succeeds, a non-retryable error, or attempts run out.

        ``retries`` receives one line per retried attempt. ``timeout_s`` and
        ``where`` (base URL) only make the final message clearer.

        Raises
        ------
        ProviderTimeout
            When the last attempt timed out.
        ProviderError
            For every other API failure, named by kind.
        """

        def is_retryable(exc: BaseException) -> bool:
            f = classify(exc)
            return f is not None and f.retryable

        def wait(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            return self.wait_s(state.attempt_number, classify(exc) if exc else None)

        def before_sleep(state: tenacity.RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            f = classify(exc) if exc else None
            slept = state.next_action.sleep if state.next_action else 0.0
            retries.append(f"{f.text if f else exc!r}; waited {slept:.2f} s")

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(max(1, self.max_attempts)),
            wait=wait,
            retry=tenacity.retry_if_exception(is_retryable),
            before_sleep=before_sleep,
            reraise=True,
        )
        try:
            return retrying(fn)
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped below or re-raised
            f = classify(exc)
            if f is None:
                raise
            n = len(retries) + 1
            tries = f"after {n} attempt{'s' if n != 1 else ''}"
            at = f" at {where}" if where else ""
            if f.kind == "timeout":
                limit = f"{timeout_s:g} s" if timeout_s is not None else "the timeout"
                raise ProviderTimeout(
                    f"{label}: no answer within {limit} (per-request timeout{at}); gave up {tries}",
                    provider=label,
                    kind="timeout",
                    attempts=n,
                ) from None
            hint = {
                "unreachable": "; check the base URL and that the server is running",
                "rejected": "",
                "rate_limit": "; lower the provider's concurrency or raise the limit",
                "server": "",
            }[f.kind]
            raise ProviderError(
                f"{label}{at}: {f.text}; gave up {tries}{hint}",
                provider=label,
                kind=f.kind,
                attempts=n,
                status=f.status,
            ) from None
