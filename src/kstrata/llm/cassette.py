"""Cassettes: record exchanges from any provider, replay them offline.

File format (JSON Lines, UTF-8; one complete record per line, appended with a
single ``write`` under an exclusive ``flock`` so records never interleave; a
torn last line from a crash is skipped on reading)::

    {"version": 1,
     "hash": "<request_hash: messages + explicitly passed params>",
     "provider": "openai:gpt-4o", "model": "gpt-4o-2024-08-06",
     "messages": [{"role": ..., "content": ...}, ...],
     "params": {"max_tokens": int, "temperature": float, "stop": [str] | null},
     "response": {"text": str, "finish_reason": str | null},
     "tokens": {"input": int, "output": int},
     "cost_usd": float, "latency_s": float, "attempts": int,
     "recorded": "<ISO-8601 UTC>"}

No credentials are ever part of a record (requests carry no headers here).
Recording is an accounting hook (:class:`CassetteWriter`), so it works the same
for every provider.

Replay answers the k-th request with hash ``h`` from the k-th record with
hash ``h`` (the last one again once they run out), so a recorded run replays
deterministically. A request whose exact hash is not recorded falls back to a
record whose prompt has the same shape (equal once every number is masked),
because the prompts carry measured times that differ from run to run; a
request with neither is a
:class:`~kstrata.llm.base.ProviderError` naming its hash and the closest
recorded prompt.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import fcntl
import json
import logging
import os
import threading
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import zip_longest
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kstrata.llm.base import BaseProvider, CallRecord, Completion, Message, ProviderError

CASSETTE_VERSION = 1
log = logging.getLogger(__name__)


def make_record(messages: Sequence[Message], params: dict[str, Any], c: Completion) -> dict[str, Any]:
    """The cassette record of one exchange (see the module docstring)."""
    return {
        "version": CASSETTE_VERSION,
        "hash": c.request_hash,
        "provider": c.provider,
        "model": c.model,
        "messages": [dict(m) for m in messages],
        "params": params,
        "response": {"text": c.text, "finish_reason": c.raw_finish_reason},
        "tokens": {"input": c.input_tokens, "output": c.output_tokens},
        "cost_usd": c.cost_usd,
        "latency_s": c.latency_s,
        "attempts": c.attempts,
        "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def completion_of(record: dict[str, Any]) -> Completion:
    """The :class:`Completion` a record stores."""
    return Completion(
        text=record["response"]["text"],
        input_tokens=int(record["tokens"]["input"]),
        output_tokens=int(record["tokens"]["output"]),
        cost_usd=float(record.get("cost_usd", 0.0)),
        latency_s=float(record.get("latency_s", 0.0)),
        model=record.get("model", ""),
        provider=record.get("provider", ""),
        raw_finish_reason=record["response"].get("finish_reason"),
        attempts=int(record.get("attempts", 1)),
        request_hash=record["hash"],
    )


class CassetteWriter:
    """Appends records to a cassette file; safe across threads and processes.

    It is an :data:`~kstrata.llm.base.Accounting` hook: pass it (or
    :func:`~kstrata.llm.base.tee` it with another hook) as a provider's
    ``accounting`` and every successful exchange of that provider is recorded
    (``--record FILE``).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def __call__(self, call: CallRecord) -> None:
        """Record ``call`` when it succeeded (failed calls have no answer to replay)."""
        if call.completion is not None:
            self.append(make_record(call.messages, dict(call.params), call.completion))

    def append(self, record: dict[str, Any]) -> None:
        """Append one record as one line, atomically (one ``write`` under ``flock``)."""
        line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode()
        with self._lock:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._finish_torn_line(fd)
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)  # closing releases the lock

    def _finish_torn_line(self, fd: int) -> None:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            os.write(fd, b"\n")  # a crash left half a line: keep it on its own


def read_cassette(path: str | Path) -> list[dict[str, Any]]:
    """All complete records of a cassette, in file order; torn lines (not
    JSON: an interrupted append) are skipped with a warning.

    Raises
    ------
    ProviderError
        When the file is missing, or a JSON line is not a record (the message
        names the line).
    """
    path = Path(path)
    if not path.is_file():
        raise ProviderError(f"replay:{path}: no such cassette file", kind="config")
    lines = path.read_text(encoding="utf-8").split("\n")
    records = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            # a crash mid-append leaves a torn line; the writer starts anew after it
            log.warning("%s: skipping torn line %d (an interrupted write)", path, i)
            continue
        missing = [k for k in ("hash", "messages", "response", "tokens") if k not in rec] if isinstance(
            rec, dict
        ) else ["an object"]
        if missing:
            raise ProviderError(
                f"replay:{path}: line {i} is not a cassette record (no {', '.join(missing)})",
                kind="config",
            )
        records.append(rec)
    return records


_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def prompt_shape(messages: Sequence[Message]) -> str:
    """sha256 of the prompt with every number masked: two prompts that differ
    only in measured values (times, speedups, intervals, roofline fractions)
    have the same shape, so a cassette replays although timings are noisy."""
    text = _NUMBER.sub("#", _prompt_text(messages))
    return hashlib.sha256(text.encode()).hexdigest()


def _prompt_text(messages: Sequence[Message]) -> str:
    return "\n".join(f"[{m['role']}]\n{m['content']}" for m in messages)


class ReplayProvider(BaseProvider):
    """Answers from a cassette by request hash; never touches the network.

    Parameters
    ----------
    path:
        The cassette file.
    **kw:
        Passed to :class:`~kstrata.llm.base.BaseProvider` (accounting, ...).

    Raises
    ------
    ProviderError
        When the cassette is missing or corrupt.
    """

    kind = "replay"

    def __init__(self, path: str | Path, **kw: Any) -> None:
        self.path = Path(path)
        kw.setdefault("concurrency", 16)
        super().__init__(f"replay:{self.path}", "replay", **kw)
        self.records = read_cassette(self.path)
        self._by_hash: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._by_shape: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for rec in self.records:
            self._by_hash[rec["hash"]].append(rec)
            self._by_shape[prompt_shape(rec["messages"])].append(rec)
        self._used: Counter[str] = Counter()
        self._lock = threading.Lock()

    def check(self) -> None:
        if not self.records:
            raise ProviderError(f"{self.label}: the cassette holds no records", kind="config")

    def _call_once(self, messages, params, req_hash) -> Completion:  # type: ignore[no-untyped-def]
        key = req_hash
        recs = self._by_hash.get(req_hash)
        if not recs:  # same prompt but for measured numbers (timings, speedups, intervals)
            key = "shape:" + prompt_shape(messages)
            recs = self._by_shape.get(key[6:])
        if not recs:
            raise ProviderError(self._miss_message(messages, req_hash), provider=self.label, kind="replay_miss")
        with self._lock:
            k = self._used[key]
            self._used[key] += 1
        return completion_of(recs[min(k, len(recs) - 1)])

    def _miss_message(self, messages: Sequence[Message], req_hash: str) -> str:
        head = f"{self.label}: no recorded answer for request {req_hash[:16]}"
        if not self.records:
            return head + " (the cassette is empty)"
        want = _prompt_text(messages)
        scored = sorted(
            self.records,
            key=lambda r: difflib.SequenceMatcher(None, want, _prompt_text(r["messages"])).quick_ratio(),
            reverse=True,
        )[:5]
        best = max(
            scored,
            key=lambda r: difflib.SequenceMatcher(None, want, _prompt_text(r["messages"])).ratio(),
        )
        got = _prompt_text(best["messages"])
        ratio = difflib.SequenceMatcher(None, want, got).ratio()
        diff = next(
            (
                f"; first difference at prompt line {i + 1}: recorded {a[:120]!r}, requested {b[:120]!r}"
                for i, (a, b) in enumerate(zip_longest(got.splitlines(), want.splitlines(), fillvalue=""))
                if a != b
            ),
            "",
        )
        return (
            f"{head} ({len(self.records)} records in the cassette); closest recorded prompt: "
            f"{best['hash'][:16]} ({ratio:.0%} similar{diff}). The run differs from the recorded "
            "one (task, config, or prompt templates changed)."
        )
