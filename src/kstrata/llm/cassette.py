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
record whose prompt has the same shape: equal once :func:`mask_measured` has
taken out everything that depends on timing (the feedback's time, speedup,
roofline and profiler lines, including the "untrusted timing" note a noisy
machine adds, and numbers with a measured unit elsewhere), because those
differ from run to run while the code and the correctness feedback do not.
A request with neither is a :class:`~kstrata.llm.base.ProviderError` naming
its hash, the closest recorded prompt and the first difference between the
two that masking leaves (recorded line against requested line).
"""

from __future__ import annotations

import difflib
import math
import hashlib
import re
import fcntl
import json
import logging
import os
import threading
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
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


#: characters a cassette may hold (a recorded run of 40 LLM calls is a few MB)
MAX_CASSETTE_CHARS = 256_000_000


def read_cassette(path: str | Path) -> list[dict[str, Any]]:
    """All complete records of a cassette, in file order; torn lines (not
    JSON: an interrupted append) are skipped with a warning.

    Raises
    ------
    ProviderError
        When the file is missing, longer than :data:`MAX_CASSETTE_CHARS`, or a
        JSON line is not a record (the message names the line).
    """
    path = Path(path)
    if not path.is_file():
        raise ProviderError(f"replay:{path}: no such cassette file", kind="config")
    from kstrata.textfile import TextTooLarge, read_text

    try:  # bounded: a file larger than memory was read whole (red team rt65)
        lines = read_text(path, MAX_CASSETTE_CHARS, "a cassette", encoding="utf-8").split("\n")
    except TextTooLarge as e:
        raise ProviderError(f"replay:{e}", kind="config") from None
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
        except (ValueError, RecursionError) as e:  # nested too deep, an int of 5000 digits (red team rt51)
            raise ProviderError(f"replay:{path}: line {i} is not usable JSON ({type(e).__name__})",
                                kind="config") from None
        missing = [k for k in ("hash", "messages", "response", "tokens") if k not in rec] if isinstance(
            rec, dict
        ) else ["an object"]
        if missing:
            raise ProviderError(
                f"replay:{path}: line {i} is not a cassette record (no {', '.join(missing)})",
                kind="config",
            )
        wrong = _wrong_kind(rec)
        if wrong:
            raise ProviderError(f"replay:{path}: line {i} is not a cassette record ({wrong})", kind="config")
        records.append(rec)
    return records


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _wrong_kind(rec: dict[str, Any]) -> str | None:
    """Which field of a cassette record is not of the kind :func:`record` writes, or None.
    A cassette is a file anyone could have edited: ``"messages": 5`` or a list as ``hash`` ended
    ``kstrata optimize --llm replay:FILE`` in a TypeError traceback (red team rt62)."""
    messages = rec["messages"]
    response, tokens = rec["response"], rec["tokens"]
    checks = (
        ("hash", isinstance(rec["hash"], str)),
        ("messages", isinstance(messages, list) and all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in messages)),
        ("response", isinstance(response, dict) and isinstance(response.get("text"), str)
         and isinstance(response.get("finish_reason"), (str, type(None)))),
        ("tokens", isinstance(tokens, dict) and all(_number(tokens.get(k)) for k in ("input", "output"))),
        *((k, _number(rec[k])) for k in ("cost_usd", "latency_s", "attempts") if k in rec),
        *((k, isinstance(rec[k], str)) for k in ("model", "provider") if k in rec),
    )
    bad = [name for name, ok in checks if not ok]
    return f"{', '.join(bad)} not of the kind kstrata records" if bad else None


#: Prompt lines whose whole content is measured (see ``agents/prompts/_base.j2``,
#: "Feedback on the current candidate"): the median time, the speedups with
#: their intervals, the roofline fraction and bound, and every profiler line
#: (profiler findings, counters, the timer's noisy/under-the-floor notes and
#: the evaluator's ``untrusted timing:`` note), and the goal's readings
#: (``agents/prompts/goal.j2``: this candidate's, the run's best, with their trust).
#: How many of them a prompt has depends on timing too (a noisy machine adds an
#: untrusted-timing line).
MEASURED_LINE = re.compile(r"^\s*- (?:time|speedup vs [\w.-]+|roofline|profiler|counters?|this candidate|"
                           r"the run's best):")

#: A number with a measured unit, in lines that are not measured as a whole
#: (e.g. ``correct, 0.521x`` in the history of earlier attempts, a skill's
#: ``1.7x over its parent``): speedups, times, fractions and rates.
MEASURED_NUMBER = re.compile(
    r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
    r"(?:x|\s?(?:ms|us|µs|ns|s|%|[GMKT]?B/s|[GMT]?FLOP/s|[GMT]?FLOPS))(?![\w/])"
)

#: What a run of measured lines becomes: one line, however many it had.
MASKED_LINES = "- <measured>"
_FENCE = re.compile(r"^\s*```")


def mask_measured(text: str) -> list[tuple[str, str]]:
    """``text`` with everything that depends on timing masked, line by line.

    Replay matches prompts by this (:func:`prompt_shape`): a recorded prompt
    and a replayed one differ in measured values (a shared CPU times the same
    candidate differently on every run, and a noisy timing adds an
    ``untrusted timing`` profiler line), while what the model was asked about
    (task, code, levels, correctness feedback, history) must be equal.

    Rules, applied outside code fences only (lines between ````` fences are
    sources and never masked, so different code always differs):

    1. Each run of consecutive :data:`MEASURED_LINE` lines (``- time:``,
       ``- speedup vs ...:``, ``- roofline:``, ``- profiler:``,
       ``- counters:``) becomes the single line :data:`MASKED_LINES`, so the
       number of profiler lines does not matter, only that the candidate was
       measured.
    2. In every other line, each number with a measured unit
       (:data:`MEASURED_NUMBER`: ``0.52x``, ``117.4 ms``, ``6.1%``,
       ``19 GB/s``, ...) becomes ``#`` followed by its unit; unit-less numbers
       (shapes, element counts in a correctness diagnosis) stay.

    Parameters
    ----------
    text:
        A prompt (one or more chat messages rendered as text).

    Returns
    -------
    list of (str, str)
        One pair per masked line: the masked line and the original text it
        stands for (several lines joined by newlines for a masked run), so a
        difference between masked prompts can be shown as the real lines.
    """
    out: list[tuple[str, str]] = []
    in_code = False
    run: list[str] = []
    for line in text.split("\n"):
        if not in_code and MEASURED_LINE.match(line):
            run.append(line)
            continue
        if run:
            out.append((MASKED_LINES, "\n".join(run)))
            run = []
        if _FENCE.match(line):
            in_code = not in_code
            out.append((line, line))
        elif in_code:
            out.append((line, line))
        else:
            out.append((MEASURED_NUMBER.sub(_mask_number, line), line))
    if run:
        out.append((MASKED_LINES, "\n".join(run)))
    return out


def _mask_number(m: re.Match[str]) -> str:
    unit = re.sub(r"^[-+]?[\d.]+(?:[eE][-+]?\d+)?", "", m.group(0))
    return "#" + unit


def prompt_shape(messages: Sequence[Message]) -> str:
    """sha256 of the prompt with everything that depends on timing masked
    (:func:`mask_measured`): two prompts that differ only in measured values
    or measured lines (times, speedups, intervals, roofline fractions,
    profiler findings, untrusted-timing notes) have the same shape, so a
    cassette replays however noisy the timings are."""
    text = "\n".join(masked for masked, _ in mask_measured(_prompt_text(messages)))
    return hashlib.sha256(text.encode()).hexdigest()


def first_difference(recorded: Sequence[Message], requested: Sequence[Message]) -> str | None:
    """The first difference between two prompts that :func:`mask_measured`
    leaves, as ``"prompt line N: recorded '...', requested '...'"`` with the
    real (unmasked) lines, or None when the masked prompts are equal.

    Lines are aligned with :class:`difflib.SequenceMatcher` on the masked
    lines, so an inserted or removed line is shown as such (``(none)`` on the
    other side) instead of shifting every later line. ``N`` is the line in the
    requested prompt's text (``[role]`` headers included).
    """
    a = mask_measured(_prompt_text(recorded))
    b = mask_measured(_prompt_text(requested))
    ops = difflib.SequenceMatcher(None, [m for m, _ in a], [m for m, _ in b], autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        line = 1 + sum(orig.count("\n") + 1 for _, orig in b[:j1])
        got = "\n".join(orig for _, orig in a[i1:i2][:3])
        want = "\n".join(orig for _, orig in b[j1:j2][:3])
        return (f"prompt line {line}: recorded {got[:200]!r}" if got else f"prompt line {line}: recorded (none)") + (
            f", requested {want[:200]!r}" if want else ", requested (none)")
    return None


def _prompt_text(messages: Sequence[Message]) -> str:
    return "\n".join(f"[{m['role']}]\n{m['content']}" for m in messages)


#: least similarity (difflib ratio of the masked prompts) at which a prompt the
#: cassette does not hold is answered with the closest recorded one of the same
#: role: a noisy machine's timings steer a replayed search off the recorded path
#: (a newcomer's README replay got 2 of 4 calls answered and stopped)
NEAREST_MIN = 0.8
#: how such an answer's provider label is marked in the run store
NEAREST_MARK = "closest recorded prompt"


def similar_text(ratio: float) -> str:
    """A similarity (0-1) as a percentage rounded down to 0.1%: a prompt that is
    not the recorded one never reads "100% similar" (newcomer nc20: "no recorded
    prompt ... (100% similar)" read as a contradiction)."""
    return f"{math.floor(max(0.0, min(1.0, ratio)) * 1000) / 10:.1f}%"


class ReplayProvider(BaseProvider):
    """Answers from a cassette by request hash; never touches the network.

    A prompt matches its recording by hash, else with measured values masked
    (:func:`prompt_shape`), else (with ``nearest``) the closest recorded
    prompt of the same role, each such record once, its answer marked in
    the call's provider label (:data:`NEAREST_MARK`).

    Parameters
    ----------
    path:
        The cassette file.
    nearest:
        Least similarity (0-1) for the closest-prompt fallback
        (:data:`NEAREST_MIN`); ``None``: a prompt not recorded is a miss.
    **kw:
        Passed to :class:`~kstrata.llm.base.BaseProvider` (accounting, ...).

    Raises
    ------
    ProviderError
        When the cassette is missing or corrupt.
    """

    kind = "replay"

    def __init__(self, path: str | Path, nearest: float | None = NEAREST_MIN, **kw: Any) -> None:
        self.path = Path(path)
        self.nearest = nearest
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
        if not recs and self.nearest is not None:
            near = self._closest(messages)
            if near is not None:
                rec, ratio = near
                with self._lock:
                    self._used["near:" + rec["hash"]] += 1
                return replace(completion_of(rec), provider=f"{self.label} {NEAREST_MARK} ({similar_text(ratio)} similar, "
                                                                f"recorded for request {rec['hash'][:16]})")
        if not recs:
            raise ProviderError(self._miss_message(messages, req_hash), provider=self.label, kind="replay_miss")
        with self._lock:
            k = self._used[key]
            self._used[key] += 1
        return completion_of(recs[min(k, len(recs) - 1)])

    def _closest(self, messages: Sequence[Message]) -> tuple[dict[str, Any], float] | None:
        """The recorded exchange whose prompt is closest to ``messages`` once
        measured values are masked, among those asked of the same role (the
        first line of the last message), with its similarity (0-1); ``None``
        when none reaches :attr:`nearest`. Each record serves once here."""
        role = _role_line(messages)
        want = _masked_text(messages)
        best: tuple[dict[str, Any], float] | None = None
        for rec in self.records:
            if _role_line(rec["messages"]) != role or self._used["near:" + rec["hash"]]:
                continue
            ratio = difflib.SequenceMatcher(None, want, _masked_text(rec["messages"]), autojunk=False).ratio()
            if ratio >= float(self.nearest or 0) and (best is None or ratio > best[1]):
                best = (rec, ratio)
        return best

    def _miss_message(self, messages: Sequence[Message], req_hash: str) -> str:
        head = f"{self.label}: no recorded answer for request {req_hash[:16]}"
        if not self.records:
            return head + " (the cassette is empty)"
        masked = {id(r): _masked_text(r["messages"]) for r in self.records}
        want = _masked_text(messages)
        scored = sorted(
            self.records,
            key=lambda r: difflib.SequenceMatcher(None, want, masked[id(r)]).quick_ratio(),
            reverse=True,
        )[:5]
        ratios = {id(r): difflib.SequenceMatcher(None, want, masked[id(r)]).ratio() for r in scored}
        best = max(scored, key=lambda r: ratios[id(r)])
        diff = first_difference(best["messages"], messages)
        return (
            f"{head} ({len(self.records)} records in the cassette); closest recorded prompt: "
            f"{best['hash'][:16]} ({similar_text(ratios[id(best)])} similar once measured values are masked"
            f"{'; first difference at ' + diff if diff else ''}). The run differs from the recorded "
            "one (task, config, or prompt templates changed)."
        )


def _role_line(messages: Sequence[Message]) -> str:
    """The first line of the last message: the role a prompt is asked of."""
    return (str(messages[-1].get("content") or "").split("\n", 1)[0] if messages else "")


def _masked_text(messages: Sequence[Message]) -> str:
    return "\n".join(masked for masked, _ in mask_measured(_prompt_text(messages)))
