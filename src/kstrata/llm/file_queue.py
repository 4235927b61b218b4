"""``queue:DIR`` -- requests as files, answered by a person or another program.

For a person in the loop, air-gapped labs (carry the folder across), and
external agents that watch a folder.

File protocol
-------------
For each request kstrata writes, atomically (temp file + rename; temp names
start with ``.`` and end with ``.tmp``, so ignore those):

1. ``DIR/<id>.request.json`` -- metadata::

       {"version": 1, "id": "<id>", "hash": "<sha256 of the request>",
        "created": "<ISO-8601 UTC>", "params": {"max_tokens": int,
        "temperature": float, "stop": [str] | null},
        "messages": [{"role": "system" | "user" | "assistant", "content": str}],
        "answer_file": "<id>.response.md"}

2. ``DIR/<id>.prompt.md`` -- the same messages as Markdown for a reader, each
   introduced by a line ``<!-- kstrata: role=ROLE -->``. It is written last: its
   appearance means the request is complete.

The answerer writes the model's answer text, exactly as given, to
``DIR/<id>.response.md`` -- atomically please (write ``.<id>.response.md.tmp``
then rename). An answer renamed into place is read as soon as it is seen: it
cannot be half-written (on Linux, where inotify tells a rename into the folder
from a write, :mod:`kstrata.llm.queue_arrivals`). A file written in place (or
one whose arrival could not be seen) is read once its size has stayed the same,
and it was last modified, ``settle_s`` seconds before (default
:data:`SETTLE_S`: a person pasting or a tool writing in pieces pauses between
them); an answer that ends inside a code block or a SEARCH/REPLACE edit (still
being written, it seems) waits ``cutoff_wait_s`` (default
:data:`CUTOFF_WAIT_S`) unchanged before it is read as it is, renamed or not. Optionally, *before* the answer,
``DIR/<id>.response.json`` may report ``{"model": str, "input_tokens": int,
"output_tokens": int, "cost_usd": float, "finish_reason": str}``; without it
tokens are estimated as ``ceil(characters / 4)``, cost is 0 and the model is
``"queue"``.

``<id>`` is the first 16 hex digits of the request hash, with ``-2``, ``-3``, ...
for a repeat of the same request within one provider's life. It is therefore
the same when a run is restarted, and an answer already in the folder is used
at once (a run killed while waiting resumes without asking again).

kstrata polls every ``poll_s`` seconds and gives up after ``timeout_s`` with a
:class:`~kstrata.llm.base.ProviderTimeout` naming the file it waited for.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kstrata.llm.base import (
    BaseProvider,
    Completion,
    ProviderError,
    ProviderTimeout,
    render_markdown,
)
from kstrata.llm.queue_arrivals import Arrivals
from kstrata.store.artifacts import write_atomic

PROTOCOL_VERSION = 1

#: seconds an answer file written in place must stay unchanged before it is read: long enough for a person
#: or a tool writing it in pieces (newcomer nc20: two parts 4 s apart were read after 0.2 s, half written)
SETTLE_S = 5.0
#: seconds an answer that ends inside a code block or an edit must stay unchanged before it is read as it is
CUTOFF_WAIT_S = 60.0


#: the largest answer file read (bytes): :data:`kstrata.agents.parse.MAX_ANSWER_CHARS` characters of
#: UTF-8 at up to 4 bytes each; a larger file is refused unread
MAX_ANSWER_BYTES = 16_000_000
#: the largest ``<id>.response.json`` report read (bytes)
MAX_REPORT_BYTES = 1_000_000


def read_answer_file(path: Path, limit: int, label: str) -> str:
    """The UTF-8 text of ``path``, a file the answerer wrote into the queue
    folder: opened without following a symbolic link, and only a regular file
    of at most ``limit`` bytes is read. The answerer is untrusted (an external
    agent, the model): an answer linked to ``/proc/self/environ`` was read as
    kstrata and its environment, API keys included, came back to the
    answerer in the next prompt; linked to a run's ``secret``, the hidden
    tests' seed; to ``/dev/zero`` or a FIFO, kstrata read without end (red-team rt57).

    Raises
    ------
    ProviderError
        (kind ``rejected``) When ``path`` is a symbolic link or not a regular
        file, is larger than ``limit`` bytes, or is not UTF-8 text.
    """
    def refuse(why: str) -> ProviderError:
        return ProviderError(f"{label}: {path} {why}", provider=label, kind="rejected")

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        if os.path.islink(path):
            raise refuse("is a symbolic link; write the answer itself into the file") from None
        raise refuse(f"cannot be read: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise refuse("is not a regular file (a FIFO, device or socket); write the answer into a file")
        data = f.read(limit + 1) if st.st_size <= limit else b""  # a larger one is refused unread
    if st.st_size > limit or len(data) > limit:
        raise refuse(f"is {max(st.st_size, len(data))} bytes, over the {limit} an answer may have; write a "
                     "shorter answer (SEARCH/REPLACE edits, or the source alone)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise refuse(f"is not UTF-8 text: {e}") from None


#: Tokens a report may claim for one answer, at most.
MAX_REPORTED_TOKENS = 10**9


def _checked_report(data: dict[str, Any], path: Path, label: str) -> dict[str, Any]:
    """A ``<id>.response.json`` report whose fields have the types the file
    protocol names: token counts whole numbers in ``[0, MAX_REPORTED_TOKENS]``,
    ``cost_usd`` a finite number >= 0, ``model`` and ``finish_reason`` text.
    The answerer is untrusted: ``{"input_tokens": "abc"}`` (or ``1e400``, a
    list) ended the run in a ValueError/OverflowError/TypeError, a dict as
    ``finish_reason`` reached the run store, and a NaN or negative
    ``cost_usd`` kept the run's cost limit from ever being reached (red-team
    rt57).

    Raises
    ------
    ProviderError
        (kind ``rejected``) Naming the first field that is wrong.
    """
    def bad(key: str, want: str) -> ProviderError:
        return ProviderError(f"{label}: {path}: {key!r} is {str(data[key])[:60]!r}, not {want}",
                             provider=label, kind="rejected")

    for key in ("input_tokens", "output_tokens"):
        v = data.get(key)
        if key in data and not (type(v) is int and 0 <= v <= MAX_REPORTED_TOKENS):
            raise bad(key, f"a whole number from 0 to {MAX_REPORTED_TOKENS}")
    v = data.get("cost_usd")
    if "cost_usd" in data and not (type(v) in (int, float) and math.isfinite(v) and v >= 0):
        raise bad("cost_usd", "a finite number >= 0 (US dollars)")
    for key in ("model", "finish_reason"):
        if key in data and not isinstance(data[key], str):
            raise bad(key, "text")
    return data


def waiting_text(directory: str | Path) -> str | None:
    """What a ``queue:DIR`` run waits for, for a progress line: the newest
    request of ``directory`` whose prompt is written and whose answer is not
    (``"waiting for DIR/<id>.response.md (the prompt: DIR/<id>.prompt.md)"``,
    with how many other requests are unanswered), or ``None`` when none is
    (or the folder cannot be read). An answer being written, one modified in
    the last :data:`CUTOFF_WAIT_S` seconds that ends inside a code block or an
    edit, is named as such: kstrata waits for it to be finished."""
    directory = Path(directory)
    try:
        prompts = [(p.stat().st_mtime, p) for p in directory.glob("*.prompt.md")]
    except OSError:
        return None
    open_ = sorted((m, p) for m, p in prompts
                   if not p.with_name(p.name.removesuffix(".prompt.md") + ".response.md").exists())
    partial = _partial_answer(directory)
    if partial is not None:
        return (f"waiting for {partial} to be finished: it ends inside a code block or an edit (read as it is "
                f"once unchanged for {CUTOFF_WAIT_S:g} s; write the whole answer to a temporary name, then "
                "rename it)")
    if not open_:
        return None
    prompt = open_[-1][1]
    answer = prompt.with_name(prompt.name.removesuffix(".prompt.md") + ".response.md")
    more = f"; {len(open_) - 1} older request(s) there unanswered too" if len(open_) > 1 else ""
    return f"waiting for {answer} (the prompt: {prompt}){more}"


def _partial_answer(directory: Path) -> Path | None:
    """The newest ``*.response.md`` of ``directory`` modified in the last
    :data:`CUTOFF_WAIT_S` seconds that looks cut off (an answer still being
    written in place), or ``None``."""
    from kstrata.agents.parse import looks_cut_off

    now = time.time()
    try:
        recent = sorted(((a.lstat().st_mtime, a) for a in directory.glob("*.response.md")), reverse=True)
    except OSError:
        return None
    for mtime, answer in recent:
        if now - mtime > CUTOFF_WAIT_S:
            break
        try:
            if looks_cut_off(read_answer_file(answer, MAX_ANSWER_BYTES, "queue")):
                return answer
        except ProviderError:
            continue
    return None


def estimate_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``: OpenAI's rule of thumb of ~4 characters per token."""
    return math.ceil(len(text) / 4)


class QueueProvider(BaseProvider):
    """Answers come from files in ``directory``; see the module docstring.

    Parameters
    ----------
    directory:
        The queue folder (created if missing).
    timeout_s:
        Seconds to wait for each answer.
    poll_s:
        Seconds between looks for the answer file.
    settle_s:
        Seconds an answer file written in place must stay unchanged (its
        size, and since its last modification) before it is read (protects
        against a person or an editor writing it in pieces). An answer seen
        to arrive by a rename is read without this wait.
    cutoff_wait_s:
        Seconds an answer that ends inside a code block or a SEARCH/REPLACE
        edit (:func:`kstrata.agents.parse.looks_cut_off`) must stay unchanged
        before it is read as it is: such a file is most likely still being
        written. At least ``settle_s``.
    **kw:
        Passed to :class:`~kstrata.llm.base.BaseProvider` (concurrency,
        defaults, accounting).
    """

    kind = "queue"

    def __init__(
        self,
        directory: str | Path,
        *,
        timeout_s: float = 24 * 3600.0,
        poll_s: float = 0.5,
        settle_s: float = SETTLE_S,
        cutoff_wait_s: float = CUTOFF_WAIT_S,
        **kw: Any,
    ) -> None:
        self.directory = Path(directory)
        kw.setdefault("concurrency", 64)
        super().__init__(f"queue:{self.directory}", "queue", **kw)
        self.timeout_s = timeout_s
        self.poll_s = poll_s
        self.settle_s = settle_s
        self.cutoff_wait_s = max(cutoff_wait_s, settle_s)
        self._seen: Counter[str] = Counter()
        self._ids_lock = threading.Lock()
        self._arrivals: Arrivals | None = None

    def check(self) -> None:
        """Create the folder and make sure it is writable.

        Raises
        ------
        ProviderError
            When the folder cannot be created or written.
        """
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".check.", suffix=".tmp", dir=self.directory)
            os.close(fd)
            os.unlink(tmp)
        except OSError as e:
            raise ProviderError(
                f"{self.label}: cannot write to {self.directory}: {e.strerror or e}",
                provider=self.label,
                kind="config",
            ) from None

    def request_id(self, req_hash: str) -> str:
        """The id of the next request with hash ``req_hash`` (see module docstring)."""
        with self._ids_lock:
            self._seen[req_hash] += 1
            n = self._seen[req_hash]
        return req_hash[:16] + (f"-{n}" if n > 1 else "")

    def _watch(self) -> Arrivals:
        """The folder's :class:`Arrivals` watch, started before a request is
        written (an answer renamed in before the watch began waits to settle)."""
        with self._ids_lock:
            if self._arrivals is None or self._arrivals.blind:
                self._arrivals = Arrivals(self.directory)
            return self._arrivals

    def _call_once(self, messages, params, req_hash) -> Completion:  # type: ignore[no-untyped-def]
        self.check()
        self._watch()
        rid = self.request_id(req_hash)
        answer = self.directory / f"{rid}.response.md"
        t0 = time.perf_counter()
        if not answer.exists():
            meta = {
                "version": PROTOCOL_VERSION,
                "id": rid,
                "hash": req_hash,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "params": params,
                "messages": list(messages),
                "answer_file": answer.name,
            }
            write_atomic(self.directory / f"{rid}.request.json", json.dumps(meta, indent=2) + "\n")
            header = (
                f"<!-- kstrata request {rid}: write the answer to {answer.name} "
                "(atomically: temp file, then rename) -->\n"
            )
            write_atomic(self.directory / f"{rid}.prompt.md", render_markdown(messages, header))
        text = self._wait_for(answer, t0)
        report = self._read_report(self.directory / f"{rid}.response.json")
        prompt_chars = sum(len(m["content"]) for m in messages)
        tin = int(report.get("input_tokens", math.ceil(prompt_chars / 4)))
        tout = int(report.get("output_tokens", estimate_tokens(text)))
        return Completion(
            text=text,
            input_tokens=tin,
            output_tokens=tout,
            cost_usd=float(report.get("cost_usd", self.cost(tin, tout))),
            latency_s=time.perf_counter() - t0,
            model=str(report.get("model", "queue")),
            provider=self.label,
            raw_finish_reason=report.get("finish_reason", "stop"),
            request_hash=req_hash,
        )

    def _wait_for(self, answer: Path, t0: float) -> str:
        """The text of ``answer`` once it has settled (see the module docstring)."""
        from kstrata.agents.parse import looks_cut_off

        last: tuple[int, int] | None = None
        stable_since = 0.0
        while True:
            now = time.perf_counter()
            try:
                st = answer.lstat()  # a link's own size: its target is never looked at
                state: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
            except FileNotFoundError:
                state = None
            if state is not None:
                text = self._renamed_whole(answer)
                if text is not None and not looks_cut_off(text):
                    return text
                if state != last:
                    last, stable_since = state, now
                else:
                    # unchanged since the last look: settled once settle_s has passed since it was last
                    # written (an answer already there when a run resumes is read at once)
                    quiet = max(now - stable_since, time.time() - state[1] / 1e9)
                    if quiet >= self.settle_s:
                        text = read_answer_file(answer, MAX_ANSWER_BYTES, self.label)
                        if quiet >= self.cutoff_wait_s or not looks_cut_off(text):
                            return text
            if now - t0 > self.timeout_s:
                raise ProviderTimeout(
                    f"{self.label}: no answer in {answer} after {self.timeout_s:g} s "
                    f"(the prompt is {answer.with_name(answer.name.replace('.response.md', '.prompt.md'))})",
                    provider=self.label,
                    kind="timeout",
                )
            time.sleep(min(self.poll_s, self.settle_s) if state is not None else self.poll_s)

    def _renamed_whole(self, answer: Path) -> str | None:
        """The text of ``answer`` when it arrived by a rename and was not
        written since, before and after it was read (so not half-written);
        ``None`` when that is not known (then it must settle)."""
        arrivals = self._arrivals
        token = arrivals.whole(answer.name) if arrivals is not None else None
        if token is None:
            return None
        text = read_answer_file(answer, MAX_ANSWER_BYTES, self.label)
        return text if arrivals.whole(answer.name) == token else None

    def _read_report(self, path: Path) -> dict[str, Any]:
        if not os.path.lexists(path):
            return {}
        try:
            data = json.loads(read_answer_file(path, MAX_REPORT_BYTES, self.label))
        except (ValueError, RecursionError) as e:  # not JSON or UTF-8, nested too deep (red team rt51)
            raise ProviderError(
                f"{self.label}: {path} is not valid JSON: {e}", provider=self.label, kind="rejected"
            ) from None
        return _checked_report(data, path, self.label) if isinstance(data, dict) else {}
