"""Timing a candidate that runs in its candidate process, from the judge.

The candidate's code runs in a sandboxed candidate process
(:mod:`kstrata.sandbox`); the clock that times it is the judge's. One timed
call is one ``run i`` request (the candidate process calls the candidate on
its resident input copy ``i`` and synchronizes the device before answering),
timed with :func:`time.perf_counter_ns` around the request, minus the
round-trip cost of an empty request measured the same way (median of
:data:`CALIBRATION_CALLS` ``run`` requests that skip only the call). What is
left of the process boundary after that (tens of microseconds on a loaded
CPU) biases kernels under ~0.1 ms against the candidate; such timings are
marked overhead-dominated (:mod:`kstrata.measure.overhead`). Caches are flushed
by a separate, untimed ``flush`` request in the candidate process just before.
A patched clock, a call counter or a global switch inside the candidate's
process therefore changes nothing the judge measures.

Timed calls are checked: after the first timed call, the last one, and a
random share of the others (:data:`CHECK_SHARE`, drawn by the judge after the
call returned, so the candidate cannot know which calls are checked), the
judge fetches that call's outputs and compares them with the float64 oracle
of the same input copy. The copies hold different values (not clones), so a
memo keyed on values or addresses returns wrong outputs. The same fetch
reports the candidate process's run-time watch (functions replaced, threads
left running) and its output checks (plain tensors only), so integrity is
checked while timing too. A mismatch or such a finding raises
:class:`TimedOutputMismatch`, which becomes a ``rejected`` verdict
(``timed_output``).

Verification and timing differ in one observable way inside the candidate's
process: verification calls run with PyTorch's deterministic mode and
``fill_uninitialized_memory`` on (so unwritten outputs read as NaN), timed
calls without them (filling every allocation would be timed). A candidate
keyed on that switch is caught by the checks of its timed outputs, which it
cannot predict.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from kstrata.sandbox import wire

#: Empty requests timed to calibrate the round-trip cost subtracted from each call.
CALIBRATION_CALLS = 64
#: Share of timed calls (besides the first and last) whose outputs are checked.
CHECK_SHARE = 0.1


#: Candidate-process findings that reject a candidate when they appear during timing.
INTEGRITY_DURING_TIMING = ("output_type", "no_runtime_patching", "no_threads_left")


class TimedOutputMismatch(RuntimeError):
    """A timed call's outputs differ from the oracle: the candidate behaves
    differently when timed. ``evidence`` says which call and how."""

    def __init__(self, message: str, evidence: dict[str, Any]):
        super().__init__(message)
        self.evidence = evidence


class RemoteCandidate:
    """The candidate as :func:`kstrata.measure.timing.measure` sees it: one
    thunk per input copy, each a timed ``run`` request.

    Parameters
    ----------
    proc:
        A started :class:`kstrata.sandbox.CandidateProcess` with the candidate loaded.
    check:
        ``check(i, outputs) -> str | None``: compares the outputs of a call on
        copy ``i`` with the oracle (None when they match).
    seed:
        Seeds the judge's choice of which calls to check.
    """

    remote = True

    def __init__(self, proc: Any, check: Callable[[int, list[Any]], str | None] | None = None,
                 seed: int = 0):
        self.proc = proc
        self.check = check
        self.rng = random.Random(seed)
        self.overhead_ms = 0.0
        self.calls = 0
        self.checked = 0
        self.last_i = -1

    def again(self, seed: int) -> RemoteCandidate:
        """A handle for another timing of the same loaded candidate: its own
        call counter (so that timing's first call is checked) and its own draw
        of checked calls (``seed``)."""
        return RemoteCandidate(self.proc, check=self.check, seed=seed)

    def stage(self, sets: list[list[Any]], flush_bytes: int | None, flush: bool) -> None:
        """Send the input copies (kept resident in the candidate process)."""
        bufs: list[Any] = []
        enc = wire.encode([list(s) for s in sets], bufs, copy=False)
        self.proc.ok({"op": "stage", "sets": enc, "flush_bytes": flush_bytes, "flush": flush}, bufs)

    def calibrate(self, n: int = CALIBRATION_CALLS) -> float:
        """Median round trip of an empty ``run`` request (ms: the same path as a
        timed call without the candidate's call), subtracted from every timed call."""
        samples = []
        for _ in range(n):
            t0 = time.perf_counter_ns()
            self.proc.ok({"op": "run", "i": -1})
            samples.append((time.perf_counter_ns() - t0) / 1e6)
        self.overhead_ms = statistics.median(samples)
        return self.overhead_ms

    def thunks(self, n: int) -> list["_RunThunk"]:
        return [_RunThunk(self, i) for i in range(n)]

    def flush(self) -> None:
        self.proc.ok({"op": "flush"})

    def after_call(self, i: int, last: bool = False) -> None:
        """Maybe check the outputs of the call just timed (untimed)."""
        self.calls += 1
        if self.check is None:
            return
        if not (self.calls == 1 or last or self.rng.random() < CHECK_SHARE):
            return
        h, b = self.proc.ok({"op": "fetch"})
        try:
            outs = [wire.decode(o, b) if isinstance(o, dict) and "__tensor__" in o else None
                    for o in h.get("outputs", [])]
        except wire.WireError as e:
            raise TimedOutputMismatch(f"a timed call's outputs were malformed: {e}", {"call": self.calls})
        self.checked += 1
        for f in h.get("findings") or []:
            if isinstance(f, dict) and f.get("check") in INTEGRITY_DURING_TIMING:
                raise TimedOutputMismatch(
                    f"during timing ({f['check']}): {str(f.get('message', ''))[:500]}",
                    {"call": self.calls, "check": f["check"]})
        problem = self.check(i, outs)
        if problem:
            raise TimedOutputMismatch(
                f"timed call {self.calls} (input copy {i}) returned a wrong output: {problem}; the "
                "candidate's outputs differ between checked and timed calls", {"call": self.calls, "copy": i})

    def check_last(self) -> None:
        """Check the outputs of the final timed call."""
        if self.last_i >= 0:
            self.calls -= 1
            self.after_call(self.last_i, last=True)


class _RunThunk:
    """One timed call on copy ``i`` in the candidate process."""

    remote = True

    def __init__(self, owner: RemoteCandidate, i: int):
        self.owner, self.i = owner, i

    def prepare(self) -> None:
        self.owner.flush()

    def __call__(self) -> None:
        self.owner.proc.ok({"op": "run", "i": self.i})
        self.owner.last_i = self.i


class RemoteTimer:
    """Times local thunks with ``local`` (a :class:`CpuTimer` or
    :class:`CudaEventTimer`) and the candidate process's thunks with the
    judge's wall clock, minus the calibrated round trip (ms)."""

    def __init__(self, local: Callable[[Any], float], device: str):
        self.local = local
        self.method = getattr(local, "method", "cpu-perf_counter")
        self.device = device

    def __call__(self, thunk: Any) -> float:
        if not getattr(thunk, "remote", False):
            return self.local(thunk)
        thunk.prepare()
        t0 = time.perf_counter_ns()
        thunk()
        ms = (time.perf_counter_ns() - t0) / 1e6
        thunk.owner.after_call(thunk.i)
        return max(ms - thunk.owner.overhead_ms, 1e-6)
