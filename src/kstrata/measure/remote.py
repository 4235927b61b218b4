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
just before each timed call, untimed: on a GPU by a ``flush`` request in the
candidate's process (the device's L2, on its stream), on the CPU by the judge
itself after that request (which then only freshens), so that the candidate's
processes have nothing to do between calls and work they leave running shows
(:func:`deferred_work_note`).
A patched clock, a call counter or a global switch inside the candidate's
process therefore changes nothing the judge measures.

Timed calls are checked: after the first timed call, the last one, and a
random share of the others (:data:`CHECK_SHARE`, drawn by the judge after the
call returned, so the candidate cannot know which calls are checked), the
judge fetches that call's outputs and compares them with the float64 oracle
of the same input copy. The copies hold different values (not clones), and a
copy is freshened before every call that reuses it (:mod:`kstrata.measure.freshen`:
a block of its values scaled, in the untimed flush request), so no two timed
calls read the same values: a memo keyed on values, addresses or version
counters misses, or returns the output of values the copy no longer holds.
Checks of calls on freshened copies (at most :data:`MAX_FRESH_CHECKS` besides
the last) compare with the oracle of the values as changed; calls drawn after
those are fetched all the same and not compared, so the candidate's process
sees fetches at one rate to the end and cannot tell when checking stopped. The same fetch
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kstrata.sandbox import wire

#: Empty requests timed to calibrate the round-trip cost subtracted from each call.
CALIBRATION_CALLS = 64
def _freshen_repeats(xs: Sequence[Any]) -> bool:
    """Whether copy ``xs`` would repeat values after :func:`kstrata.measure.freshen.freshen`
    (:func:`kstrata.measure.freshen.repeats`)."""
    import torch

    from kstrata.measure.freshen import repeats

    return repeats(torch, xs)


#: What a timed call reads when the call (its round trip minus the calibrated round trip of an empty request)
#: took no time or less: kept positive so ratios stay finite, and counted by
#: :func:`kstrata.measure.timing.clamped_note` (queue round rt89: 11 of 30 calls read this under load)
CLAMP_MS = 1e-6


#: Share of timed calls (besides the first and last) whose outputs are checked.
CHECK_SHARE = 0.1
#: Checked calls on a freshened copy (:mod:`kstrata.measure.freshen`) per
#: timing besides the last: each needs the oracle of new values.
MAX_FRESH_CHECKS = 3


#: Candidate-process findings that reject a candidate when they appear during timing.
INTEGRITY_DURING_TIMING = ("output_type", "no_runtime_patching", "no_threads_left", "output_reused",
                           "kernel_launched")


class TimedOutputMismatch(RuntimeError):
    """A timed call's outputs differ from the oracle: the candidate behaves
    differently when timed. ``evidence`` says which call and how."""

    def __init__(self, message: str, evidence: dict[str, Any]):
        super().__init__(message)
        self.evidence = evidence


#: Unpredictable draws (the OS's entropy) for what a candidate must not guess.
_DRAW = random.SystemRandom()


class RemoteCandidate:
    """The candidate as :func:`kstrata.measure.timing.measure` sees it: one
    thunk per input copy, each a timed ``run`` request.

    Parameters
    ----------
    proc:
        A started :class:`kstrata.sandbox.CandidateProcess` with the candidate loaded.
    check:
        ``check(i, outputs, inputs) -> str | None``: compares the outputs of a
        call on copy ``i`` with the oracle (None when they match); ``inputs``
        is what the call read when the copy was freshened since it was staged
        (else None: the staged copy ``i``).
    seed:
        Seeds the judge's choice of which calls to check, for tests; None
        (what timings use): drawn here from the system's randomness. It was
        the timing's seed, which the candidate's process is sent in its
        ``load`` request (0 by default): the candidate could replay the draws
        and know every checked call but the last ahead of time, and do the
        work in those alone (red-team round rt55).
    """

    remote = True

    def __init__(self, proc: Any, check: Callable[[int, list[Any], Any], str | None] | None = None,
                 seed: int | None = None):
        self.proc = proc
        self.check = check
        self.rng = random.Random(_DRAW.randrange(1 << 63) if seed is None else seed)
        self.overhead_ms = 0.0
        self.calls = 0
        self.checked = 0
        self.last_i = -1
        self.flush_ms: list[float] = []
        self.staged: list[list[Any]] = []
        self.device_ms: float | None = None  # the last timed call's CUDA-event time, from its process
        self.clock: list[tuple[float, float]] = []  # (judge's wall ms, CUDA-event ms) per timed call
        self.uses: list[int] = []  # timed calls so far per copy
        self.seeds: list[list[int]] = []  # the freshens sent per copy, in order
        self.fresh_checks = 0
        self.fresh_checked = False  # a checked call read a freshened copy (check_last makes sure of one)
        #: ``redraw(i, k) -> inputs``: new values for copy ``i``'s ``k``-th reuse where the freshen would
        #: change none of its inputs (set by the caller; None: such a copy is reused as it is)
        self.redraw: Callable[[int, int], list[Any]] | None = None
        self.redrawn: list[bool] = []  # per copy: it holds values redrawn since it was staged
        #: ms of the fastest untimed call its process made under checked-call conditions at staging
        #: (its own clock; None where it made none): :func:`checked_path_note`
        self.checked_ms: float | None = None
        #: the task's reference only moves data (:func:`kstrata.verify.integrity.ops.moved_the_data`): the
        #: process's checked-condition calls count host copies of their inputs as compute (set by the caller)
        self.moves_only = False
        #: on the CPU, the judge's own :class:`kstrata.measure.cache_flush.CacheFlusher`, run after each
        #: untimed request and before the timed call (set by measure; None: the process flushes itself)
        self.judge_flusher: Any = None
        self.graphed = False  # the candidate process captured one CUDA graph per copy (stage)
        self.graph_error: str | None = None  # why it could not, when asked to
        self.use_graph = False  # timed calls replay the captured graphs (set by measure)
        #: CPU ms the candidate's processes used between the end of each timed call and the start of
        #: the next (its untimed requests, and any work it left running): :func:`deferred_work_note`
        self.gap_cpu_ms: list[float] = []
        self._cpu_after: float | None = None
        #: CPU ms its processes used between two timed calls while no request of theirs was under way (they
        #: wait for the judge's next request: an honest process uses none), per gap: :func:`left_running_note`
        self.idle_gap_ms: list[float] = []
        self._waited_at: float | None = None
        #: the judge fetched the last timed call's outputs (and inputs) after it: that gap holds the
        #: judge's own request, whose cost grows with the inputs (524 MB of logits, ~40 ms of the
        #: candidate's CPU on the H200; the baseline fetches only its outputs), so it is left out
        self._fetched = False
        #: wall ms of each output fetch after a checked call (outputs only, the judge's clock), for
        #: :func:`fetch_work_note`; the baseline fetches too when ``mirror_fetch`` is set (by measure)
        self.fetch_ms: list[float] = []
        self.mirror_fetch = False
        self._cpu_pids: list[int] = []
        self._cpu_reads = 0
        #: ``(distribution, inputs)`` probes run after the timed calls (:meth:`probe`), set by the caller
        self.probes: list[tuple[str, list[Any]]] = []
        self.probed = 0
        self._probing = False
        #: CPU ms its processes used while the judge held them stopped (:meth:`hold`) for another side's
        #: call: none for processes that stay stopped (:func:`ran_while_held`)
        self.held_cpu_ms = 0.0

    def again(self) -> RemoteCandidate:
        """A handle for another timing of the same loaded candidate: its own
        call counter (so that timing's first call is checked) and its own
        unpredictable draw of checked calls."""
        again = RemoteCandidate(self.proc, check=self.check)
        again.mirror_fetch = self.mirror_fetch
        again.probes = self.probes
        again.redraw = self.redraw
        again.moves_only = self.moves_only
        return again

    def stage(self, sets: list[list[Any]], flush_bytes: int | None, flush: bool, graph: bool = False) -> None:
        """Send the input copies (kept resident in the candidate process).

        ``graph``: on a GPU, the process also captures the candidate's call on
        each copy as a CUDA graph (``graphed`` says whether it could, and
        ``graph_error`` why not); timed calls replay them when ``use_graph``
        is set."""
        self.staged = [list(s) for s in sets]  # what each copy must still hold after a timed call
        self.uses = [0] * len(sets)
        self.seeds = [[] for _ in sets]
        self.redrawn = [False] * len(sets)
        self.fresh_checks = 0
        bufs: list[Any] = []
        enc = wire.encode(self.staged, bufs, copy=False, layout=True, views=True)
        # a fresh unpredictable seed for torch's generator, as each checked call gets its own
        h, _ = self.proc.ok({"op": "stage", "sets": enc, "flush_bytes": flush_bytes, "flush": flush,
                             "rng_seed": _DRAW.randrange(1 << 31), "graph": bool(graph),
                             "moves_only": bool(self.moves_only)}, bufs)
        self.graphed = bool(graph) and h.get("graph") is True
        ck = h.get("checked_ms")
        self.checked_ms = float(ck) if isinstance(ck, (int, float)) and not isinstance(ck, bool) \
            and 0 <= ck < 1e9 else None
        if self.checked_ms is not None and self.check is not None:
            self._check_checked()
        self.graph_error = None if self.graphed or not graph else str(h.get("graph_error") or "not captured")
        self.use_graph = False

    def calibrate(self, n: int = CALIBRATION_CALLS) -> float:
        """Median round trip of an empty ``run`` request (ms: the same path as a
        timed call without the candidate's call), subtracted from every timed call."""
        samples = []
        for _ in range(n):
            samples.append(clocked_request(self.proc, {"op": "run", "i": -1})[2])  # as a timed call's clock
        self.overhead_ms = statistics.median(samples)
        return self.overhead_ms

    def cpu_ms(self) -> float | None:
        """CPU time (user + system, ms) used so far by the candidate's
        processes, every thread included (exited ones too), read from outside
        them: each process's CPU-time clock (``clock_gettime`` on the clock id
        of its pid, ``MAKE_PROCESS_CPUCLOCK`` in Linux's
        ``include/linux/posix-timers.h``: nanoseconds), or ``/proc/PID/stat``
        through psutil (clock ticks, 10 ms) where that clock cannot be read.
        Ticks were too coarse: with a 110 ms cache flush between calls (twice
        a 480 MiB L3), a thread that finished a softmax after each call
        returned was lost in the ticks' noise. None where the process cannot
        be observed (no sandbox client). The process list is refreshed every
        32 reads.

        Each listed process counts with the children it has reaped, and the
        sandbox's zygote with the orphans it reaped (:func:`sandbox_cpu_ms`):
        a process's CPU-time clock leaves out its children, so a child forked
        in a timed call that computed the next output while the judge flushed
        the cache, then ended and was reaped by the candidate (its CPU moved
        into the parent's ``cutime``), was on no list and in no reading
        (red-team rt52). A listed process that ends moves its CPU into its
        reaper's children times, so the reading stays continuous."""
        own = getattr(self.proc, "_own_processes", None)
        if own is None:
            return None
        if not self._cpu_pids or self._cpu_reads % 32 == 0:
            self._cpu_pids = own()
        self._cpu_reads += 1
        zygote = getattr(self.proc, "zygote_pid", 0)
        return sandbox_cpu_ms(self._cpu_pids) + (reaped_cpu_ms(zygote) if zygote else 0.0)

    def thunks(self, n: int) -> list["_RunThunk"]:
        return [_RunThunk(self, i) for i in range(n)]

    def hold(self) -> None:
        """Stop the candidate's processes while something else is timed
        (:meth:`kstrata.sandbox.client.CandidateProcess.freeze`); a no-op when
        already stopped or when its process cannot be stopped."""
        if not getattr(self.proc, "frozen", None) and hasattr(self.proc, "freeze"):
            self.proc.freeze()

    def held_cpu(self, *, after: bool = False) -> float | None:
        """CPU ms used so far by the processes of the candidate's sandbox
        while :meth:`hold` holds it (None when none is stopped): those it
        stopped and the sandbox's zygote, each with what its reaped children
        used (:func:`sandbox_cpu_ms`); ``after`` (the reading after the other
        side's call) lists the sandbox's processes again, so that a process
        born while held counts too. A stopped process uses none, the zygote
        serves no request meanwhile, and a process that ended and was reaped
        meanwhile moved its CPU into its reaper's children times: an honest
        candidate's two readings are equal. A helper continued while held (by
        another helper) forked workers and stopped itself again: its own
        clock showed a millisecond, and its workers, on no list, spun through
        the baseline's calls unread (red-team rt50)."""
        frozen = list(getattr(self.proc, "frozen", None) or ())
        if not frozen:
            return None
        zygote = [z] if (z := getattr(self.proc, "zygote_pid", 0)) else []
        pids = frozen
        if after and hasattr(self.proc, "_own_processes"):
            pids = self.proc._own_processes()
        return sandbox_cpu_ms(zygote + pids)

    def release(self) -> None:
        """Let the candidate's processes run again (before its own calls)."""
        if getattr(self.proc, "frozen", None) and hasattr(self.proc, "thaw"):
            self.proc.thaw()

    def flush(self, i: int | None = None, redraw: bool = True) -> None:
        """The untimed request before a timed call on copy ``i``: on a GPU the
        candidate's process flushes the device's L2 on its stream; on the CPU
        the judge flushes the caches itself (``judge_flusher``, after the
        request): a flush of twice the last-level cache cost the candidate's
        process 110 ms of CPU per call on a host with a 480 MiB L3, in which a
        thread finishing the output after the call returned was lost
        (:func:`deferred_work_note`), and a buffer that size in each candidate
        and baseline process. When the call reuses copy ``i``, the request
        first freshens it with a seed drawn here
        (:func:`kstrata.measure.freshen.freshen`: no timed call reads values an
        earlier one read). A copy with an input the freshen leaves alone
        (integers sorted along their last dimension: position ids, offsets;
        :func:`kstrata.measure.freshen.repeats`) is restaged instead with new
        values from :attr:`redraw` where it is set and ``redraw`` (red-team
        rt61: a rotary-embedding table memoised on its position ids read
        correct and 4.4x faster, every reused copy the same values; rt64: the
        same tables beside a float input the freshen changed, 12x). How long each request took (ms, the judge's clock)
        is kept in ``flush_ms`` for :func:`untimed_work_note`."""
        h: dict[str, Any] = {"op": "flush"}
        if i is not None and 0 <= i < len(self.uses):
            if self.uses[i] and redraw and self.redraw is not None and _freshen_repeats(self.staged[i]):
                self._restage(i, self.redraw(i, self.uses[i]))
                self.redrawn[i] = True
            elif self.uses[i]:
                seeds = self.seeds[i]
                seed = _DRAW.randrange(1 << 40)
                h["freshen"] = {"i": i, "seed": seed, "previous": seeds[-1] if seeds else None}
                seeds.append(seed)
            self.uses[i] += 1
        # the idle-CPU reads off this clock too, as around a timed call: the baseline's trusted process makes
        # none, and since 55576c9 each lists the sandbox (red team rt77: an honest relu's flush read 3.58 ms
        # against the baseline's 2.37 ms here, an 'untimed work' note)
        self.flush_ms.append(clocked_request(self.proc, h)[2])
        if self.judge_flusher is not None:
            self.judge_flusher.flush()

    def after_call(self, i: int, last: bool = False) -> None:
        """Maybe check the outputs of the call just timed (untimed)."""
        self.calls += 1
        if self.check is None and not self.mirror_fetch:
            return
        fresh = i < len(self.seeds) and bool(self.seeds[i]) or i < len(self.redrawn) and self.redrawn[i]
        if not (self.calls == 1 or last or self.rng.random() < CHECK_SHARE):
            return
        # a call drawn past the checks of freshened copies the oracle can afford is fetched all the same,
        # outputs and inputs, but not compared: the candidate sees a fetch at the same rate to the end.
        # When fetches stopped after MAX_FRESH_CHECKS, a candidate that counted them (a replaced tensor
        # method the fetch calls) knew that only the last call would be fetched; its timed calls then
        # did part of the work and finished it only in a fetch, one slow fetch that left the fetches'
        # median alone (fetch_work_note), 40% of a softmax a call (red-team rt52)
        decoy = fresh and not last and self.calls != 1 and self.fresh_checks >= MAX_FRESH_CHECKS
        if fresh and not last and not decoy:
            self.fresh_checks += 1
        self.fresh_checked = self.fresh_checked or (fresh and not decoy)
        self._fetched = True
        # the outputs in a request of their own, timed: work deferred into it shows (fetch_work_note)
        h, b, ms = clocked_request(self.proc, {"op": "fetch"})  # as the flush's and the timed call's (red team rt77)
        self.fetch_ms.append(ms)
        if self.check is None:  # the baseline: the same request, for the comparison only
            return
        hi, bi = self.proc.ok({"op": "fetch", "inputs_of": i, "outputs": False})
        if decoy:
            self._timing_findings(h, hi)
            return
        try:
            outs = [wire.decode(o, b) if isinstance(o, dict) and "__tensor__" in o else None
                    for o in h.get("outputs", [])]
            ins = [wire.decode(x, bi) if isinstance(x, dict) and "__tensor__" in x else None
                   for x in hi.get("inputs", [])]
            h = {**h, "findings": list(h.get("findings") or []) + list(hi.get("findings") or [])}
        except wire.WireError as e:
            raise TimedOutputMismatch(f"a timed call's outputs were malformed: {e}", {"call": self.calls})
        except (TypeError, AttributeError, KeyError, IndexError, ValueError):
            # an honest harness always answers lists of encoded tensors: the reply was forged
            raise TimedOutputMismatch("a timed call's outputs were malformed (not the harness's reply: the "
                                      "candidate tampered with its process's harness)", {"call": self.calls})
        expected = self.staged[i] if i < len(self.staged) else []
        if fresh:  # what the copy holds after the freshens sent so far (its redrawn values, if any)
            import torch

            from kstrata.measure.freshen import replay

            expected = replay(torch, expected, self.seeds[i])
        changed = _changed_inputs(expected, ins)
        if changed is not None:
            raise TimedOutputMismatch(
                f"timed call {self.calls} (input copy {i}) modified input {changed}: the candidate writes into "
                "its inputs when timed (checked calls must leave them unchanged too)",
                {"call": self.calls, "copy": i, "input": changed})
        self.checked += 1
        self._timing_findings(h)
        # each output's strides as its header states them (one with gaps or overlaps arrives row-major)
        strides = [o.get("stride") if isinstance(o, dict) else None for o in h.get("outputs", [])]
        problem = self.check(i, outs, expected if fresh else None, strides,
                             **({"domain": True, "dist": self._probing} if self._probing else {}))
        if problem:
            raise TimedOutputMismatch(
                f"timed call {self.calls} (input copy {i}) returned a wrong output: {problem}; the "
                "candidate's outputs differ between checked and timed calls", {"call": self.calls, "copy": i})

    def _timing_findings(self, *replies: dict[str, Any]) -> None:
        """Raise :class:`TimedOutputMismatch` for the first integrity finding
        of :data:`INTEGRITY_DURING_TIMING` in the fetch ``replies``."""
        for r in replies:
            findings = r.get("findings") if isinstance(r, dict) else None
            for f in findings if isinstance(findings, list) else []:
                if isinstance(f, dict) and f.get("check") in INTEGRITY_DURING_TIMING:
                    raise TimedOutputMismatch(
                        f"during timing ({f['check']}): {str(f.get('message', ''))[:500]}",
                        {"call": self.calls, "check": f["check"]})

    def _check_checked(self) -> None:
        """Fetch the outputs of the timing process's last untimed call under checked-call conditions
        (on a clone of copy 0, as staged) and hold them against copy 0's oracle: :attr:`checked_ms` is believed only
        for a call that did the work (red-team rt61: a candidate that knows its process only times
        could make those calls cheap and wrong, and its timed calls' PyTorch path read as its kernel's).

        Raises
        ------
        TimedOutputMismatch
            When they are malformed or wrong."""
        h, b = self.proc.ok({"op": "fetch"})
        self._timing_findings(h)
        try:
            outs = [wire.decode(o, b) if isinstance(o, dict) and "__tensor__" in o else None
                    for o in h.get("outputs", [])]
        except (wire.WireError, TypeError, AttributeError, KeyError, IndexError, ValueError):
            raise TimedOutputMismatch("the outputs of the timing process's checked-condition call were "
                                      "malformed (the candidate tampered with its harness)", {"call": 0})
        problem = self.check(0, outs, None, None)
        if problem:
            raise TimedOutputMismatch(
                f"an untimed call under checked-call conditions in the timing process returned a wrong output: "
                f"{problem}; the candidate computes another way in a process that only times", {"call": 0})

    def _restage(self, i: int, xs: Sequence[Any]) -> None:
        """Copy ``i`` holds ``xs`` from now on, in the candidate's process (the same buffers) and here."""
        bufs: list[Any] = []
        enc = wire.encode([list(xs)], bufs, copy=False, layout=True, views=True)
        self.proc.ok({"op": "stage", "sets": enc, "index": i}, bufs)
        self.staged[i] = list(xs)
        self.seeds[i] = []  # the new values replace the freshened ones: the next freshen starts afresh

    def check_last(self) -> None:
        """Check the outputs of the final timed call; then, where no checked
        call read a freshened copy (a timing on a loaded machine may make
        fewer calls than it has copies, so no copy was reused), one more call
        on a freshened copy, checked. Its request sequence (flush with a
        freshen, run, fetch) is that of any checked reuse, so the candidate
        cannot tell it from a timed call: a memo that misses on every copy's
        first use and hits on a reused one (a key the freshen leaves alone:
        the sum of token ids) is caught however few calls were timed."""
        if self.last_i < 0:
            return
        self.calls -= 1
        self.after_call(self.last_i, last=True)
        if self.check is None or self.fresh_checked:
            return
        used = [i for i, n in enumerate(self.uses) if n]
        if not used:
            return
        i = _DRAW.choice(used)
        self.flush(i)
        _RunThunk(self, i)()
        self.calls -= 1
        self.after_call(i, last=True)

    def probe(self) -> None:
        """Run and check one call on each of :attr:`probes` (inputs drawn at
        the timing shape from the verification's other distributions: large,
        offset, shifted, ...), after the timed calls, in the state the timed
        calls ran in.

        Verification and timing differ inside the candidate's process (its
        checked calls run with deterministic mode and poisoned allocations,
        timed calls without), and the timed calls read the task's own draw
        only, so a candidate that computes another way when it is timed, one
        that is right on that draw alone (a softmax without its max
        subtraction, red-team 2026-12-04: correct, timed and "a tie", while
        the same code fails the verification's ``large`` draw), passed every
        check of its timed calls. Each probe's values are copied into a copy
        the timed calls used (the same buffers), then that copy goes through
        the request sequence of any checked reuse (flush with a freshen, run,
        fetch), so only its values tell it apart; its outputs are compared
        with the oracle of what it read. A probe whose inputs the task's own
        reference cannot handle in its dtype (outside the domain) is passed
        by ``check``.

        Raises
        ------
        TimedOutputMismatch
            Naming the distribution, when a probe's outputs (or inputs) are wrong.
        """
        used = [i for i, n in enumerate(self.uses) if n]
        if self.check is None or not self.probes or not used:
            return
        for dist, xs in self.probes:
            i = _DRAW.choice(used)
            self._restage(i, xs)
            self.flush(i, redraw=False)
            _RunThunk(self, i)()
            self.calls -= 1
            self._probing = dist  # its draw: the checker's allowance for a far or offset one (truthy)
            try:
                self.after_call(i, last=True)
            except TimedOutputMismatch as e:
                raise TimedOutputMismatch(
                    f"a call in the timing on inputs drawn '{dist}' (as verification draws them, here at the "
                    f"timing's shape, which may be larger than any verified one) failed: {e}. Either the kernel "
                    "is wrong on this draw at this size (a numerical error that grows with the size or the "
                    "magnitude of the inputs: look at the elements above), or it computes another way when "
                    "timed than when verified", {**e.evidence, "distribution": dist}) from None
            finally:
                self._probing = False
            self.probed += 1


#: CPU ms the candidate's stopped processes may use over a whole timing while
#: the baseline's calls run: a process the judge stopped with SIGSTOP uses none
#: until the judge continues it, so this covers only a process caught inside
#: a system call when it was stopped.
HELD_CPU_MS = 5.0


#: A timed median this many times faster than the same call under checked-call conditions
#: (:func:`checked_path_note`), beyond :data:`CHECKED_PATH_SLACK_MS`, is another computation.
CHECKED_PATH_RATIO = 3.0
#: What checked-call conditions may add to a call whatever its kernel: the poisoned allocations' fill and
#: the operator records (a few microseconds per PyTorch operator of the host code), in ms.
CHECKED_PATH_SLACK_MS = 1.0


def checked_path_note(candidate: RemoteCandidate, timed_ms: float) -> str | None:
    """A note when the candidate's timed calls (median ``timed_ms``) ran far
    faster than the same call made under checked-call conditions in its
    timing process (:attr:`RemoteCandidate.checked_ms`: poisoned
    allocations, operator records, warm caches): more than
    :data:`CHECKED_PATH_RATIO` times and :data:`CHECKED_PATH_SLACK_MS`
    faster. A candidate that tells the two apart (a fresh allocation reads
    poisoned in a checked call) can launch its kernel on its own grid with
    the same arguments when checked and have it do nothing when timed (its
    bound read from a tensor), while PyTorch does the work: red-team rt61, a
    TileLang relu whose kernel takes 53 ms was timed at 11.7 ms, correct.
    None when the calls agree or none was made."""
    ck = candidate.checked_ms
    if ck is None or not timed_ms > 0 or ck <= CHECKED_PATH_RATIO * timed_ms + CHECKED_PATH_SLACK_MS:
        return None
    return (f"checked path: the timed calls took {timed_ms:.3g} ms (median) where the same call under "
            f"checked-call conditions took {ck:.3g} ms in the timing process ({ck / timed_ms:.1f}x): the "
            "candidate computes another way when it is timed than when it is checked, so this time is not "
            "its kernel's; not ranked")


def held_delta(before: float | None, after: float | None) -> float:
    """CPU ms used between two :meth:`RemoteCandidate.held_cpu` readings
    (0.0 when either is None)."""
    if before is None or after is None:
        return 0.0
    return max(0.0, after - before)


def ran_while_held(candidate: RemoteCandidate) -> None:
    """Raise when the candidate's processes used CPU while the judge held
    them stopped for the baseline's calls (more than :data:`HELD_CPU_MS`
    in all, from their CPU-time clocks: :meth:`RemoteCandidate.held_cpu`).

    The judge stops the candidate's processes one by one (SIGSTOP), so two
    helper processes that continue each other (SIGCONT in a loop) ran on:
    the one not yet stopped continued the one just stopped, and the pair took
    the CPUs from the baseline's timed calls (red-team round of 2026-12-04,
    case rt49_helpers_continue_each_other). Only a candidate's own
    SIGCONT continues a process the judge stopped, so this is tampering.

    Raises
    ------
    TimedOutputMismatch
        With the CPU ms used while held.
    """
    if candidate.held_cpu_ms > HELD_CPU_MS:
        raise TimedOutputMismatch(
            f"the candidate's processes used {candidate.held_cpu_ms:.0f} ms of CPU while the judge held them "
            "stopped (SIGSTOP) for the baseline's timed calls: a process of the candidate continued another "
            "(SIGCONT), so its work competed with the baseline's calls", {"held_cpu_ms": candidate.held_cpu_ms})


#: How much longer (relative, and at least :data:`UNTIMED_SLACK_MS`) the
#: candidate's process may take to answer its untimed flush requests than the
#: baseline's process takes for the same flush, before the timing is marked.
UNTIMED_SLACK = 0.25
UNTIMED_SLACK_MS = 0.2


def untimed_work_note(candidate: RemoteCandidate, baseline: RemoteCandidate) -> str | None:
    """A ``suspicious`` note when the candidate's process answered its untimed
    flush requests markedly slower than the baseline's process answered the
    same flush (medians, ms): it did work outside its timed calls (a patched
    harness that computes the next output while flushing, or work deferred
    past a call's return). Both flush the same buffer size; ``None`` when the
    medians agree or either has no flush."""
    a, b = candidate.flush_ms, baseline.flush_ms
    if len(a) < 3 or len(b) < 3:
        return None
    ca, cb = statistics.median(a), statistics.median(b)
    if ca <= cb * (1 + UNTIMED_SLACK) + UNTIMED_SLACK_MS:
        return None
    return (f"untimed work: the candidate's process took {ca:.3g} ms (median) to answer the cache flush "
            f"before each timed call, the baseline's {cb:.3g} ms for the same flush: work done outside the "
            "timed calls is not in its time")


#: Share of the candidate's claimed saving per call (baseline's median timed
#: call minus the candidate's) that the excess of its median output fetch over
#: the baseline's may reach before :func:`fetch_work_note` marks the timing.
FETCH_SHARE = 0.3
#: ... and the least excess (ms) it reports,
FETCH_MIN_MS = 0.05
#: ... and in standard errors of the difference of the two mean fetches (Welch).
FETCH_SE = 3.0


def fetch_work_note(candidate: RemoteCandidate, baseline: RemoteCandidate, candidate_ms: Sequence[float],
                    baseline_ms: Sequence[float]) -> str | None:
    """A ``suspicious`` note when the candidate's process took markedly
    longer to hand over a checked call's outputs than the baseline's process
    took to hand over its own outputs of the same shapes, by at least
    :data:`FETCH_SHARE` of what the candidate claims to save per call.

    The output fetch after a checked call is an untimed request that the
    candidate's process serves, so a patched harness can do the work there:
    a timed call that computed a sixth of a softmax, with the rest done when
    (and only when) its outputs were fetched, read 8.2x on an unchanged
    ``torch.softmax`` (red-team round of 2026-12-03: the handlers were
    replaced through a generator's frame). Moved work is exactly the saving
    it fakes, so it is compared with that saving, not with the fetch's own
    cost (which for a memory-bound op is as large as the call). Both sides'
    fetches are timed with the judge's clock, outputs only, after the same
    share of calls (the first, the last and a random tenth); medians (ms).
    The excess must also pass :data:`FETCH_SE` standard errors of the
    difference of the mean fetches, so that fetch noise on a loaded machine
    does not mark an honest speedup. ``None`` when the candidate is not
    faster, the excess is below the thresholds, or either side has fewer
    than 3 fetches."""
    a, b = candidate.fetch_ms, baseline.fetch_ms
    if len(a) < 3 or len(b) < 3 or not candidate_ms or not baseline_ms:
        return None
    saving = statistics.median(baseline_ms) - statistics.median(candidate_ms)
    fa, fb = statistics.median(a), statistics.median(b)
    excess = fa - fb
    se = (statistics.variance(a) / len(a) + statistics.variance(b) / len(b)) ** 0.5
    if saving <= 0 or excess <= max(FETCH_MIN_MS, FETCH_SHARE * saving) \
            or statistics.fmean(a) - statistics.fmean(b) <= FETCH_SE * se:
        return None
    return (f"deferred work: the candidate's process took {fa:.3g} ms (median of {len(a)}) to hand over a "
            f"checked call's outputs, the baseline's {fb:.3g} ms for outputs of the same shapes; the "
            f"{excess:.3g} ms more is {excess / saving:.0%} of the {saving:.3g} ms per call the candidate "
            "reads faster: work moved out of the timed call into the output fetch is not in its time")


#: Least excess of CPU time (ms, over the whole timing) outside the candidate's
#: timed calls that :func:`deferred_work_note` reports.
DEFERRED_MIN_MS = 2.0
#: ... and as a share of the candidate's total timed time,
DEFERRED_SHARE = 0.25
#: ... and as a share of the baseline's own CPU per gap (two processes flushing
#: the same buffer differ systematically by a few tenths of a percent),
DEFERRED_REL = 0.01
#: ... and in standard errors of the difference of the two mean gaps (Welch):
#: the flush's CPU varies with the memory traffic of the whole machine.
DEFERRED_SE = 4.0


def deferred_work_note(candidate: RemoteCandidate, baseline: RemoteCandidate, timed_ms: float) -> str | None:
    """A ``suspicious`` note when the candidate's processes used markedly more
    CPU between their timed calls than the baseline's processes did between
    theirs (per gap, ms, from :meth:`RemoteCandidate.cpu_ms`): work left
    running when a call returned (a thread that finishes the output while the
    judge flushes the cache made an unchanged softmax read 5x faster;
    red-team round of 2026-12-02). Both processes answer the same untimed
    requests (flush and freshen), so the baseline's CPU there is the honest
    cost; the gaps in which the judge fetched outputs (and the candidate's
    inputs: the occasional output check) are left out, on both sides, and
    :func:`fetch_work_note` compares the fetches themselves: on the H200 the
    input transfers alone made the shipped Triton
    cross_entropy (524 MB of logits) read 940 ms against eager's 70 ms, and
    a deferred thread cannot tell in advance which gaps those are. Read from
    outside the candidate's processes, so a patched harness cannot hide it.

    The mean excess per gap must pass :data:`DEFERRED_SE` standard errors of
    the difference of means and :data:`DEFERRED_REL` of the baseline's mean
    gap; summed over the candidate's gaps it must pass
    :data:`DEFERRED_MIN_MS` and :data:`DEFERRED_SHARE` of ``timed_ms`` (the
    candidate's timed calls, summed). A fixed share of the baseline's gaps
    (15%) was the rule before: on a host whose cache flush costs 110 ms of
    CPU (a 480 MiB L3) the deferred softmax's 2 ms per gap never passed it.
    ``None`` otherwise or when either side has fewer than 3 gaps."""
    a, b = candidate.gap_cpu_ms, baseline.gap_cpu_ms
    if len(a) < 3 or len(b) < 3:
        return None
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    se = (statistics.variance(a) / len(a) + statistics.variance(b) / len(b)) ** 0.5
    excess = ma - mb
    total = excess * len(a)
    if (excess <= DEFERRED_SE * se or excess <= DEFERRED_REL * mb
            or total <= max(DEFERRED_MIN_MS, DEFERRED_SHARE * timed_ms)):
        return None
    return (f"deferred work: the candidate's processes used {ma:.3g} ms of CPU per gap between their {len(a) + 1} "
            f"timed calls (mean), the baseline's {mb:.3g} ms for the same untimed requests ({excess * len(a):.0f} ms "
            f"more in all, {excess / se if se else float('inf'):.0f} standard errors), against {timed_ms:.0f} ms in "
            "the timed calls: work left running after a call returned is not in its time")


#: Least CPU (ms, over the whole timing) that the candidate's processes may use while they wait for
#: the judge's next request between timed calls before :func:`left_running_note` marks the timing,
IDLE_MIN_MS = 2.0
#: ... and as a share of the candidate's total timed time,
IDLE_SHARE = 0.05
#: ... and per gap (ms): the harness's own way back from writing a reply to waiting for the next
#: request lands in the window after the judge has read the reply (honest relu, GELU and softmax timed
#: against eager here: 5.1-6.6 ms over 71 gaps, ~0.08 ms a gap; red team rt81).
IDLE_GAP_MS = 0.3


def left_running_note(candidate: RemoteCandidate, timed_ms: float) -> str | None:
    """A ``suspicious`` note when the candidate's processes used CPU while
    none of their requests was under way between timed calls
    (:attr:`RemoteCandidate.idle_gap_ms`: the sandbox's idle-CPU windows,
    :mod:`kstrata.sandbox.idle_cpu`), over :data:`IDLE_MIN_MS` and
    :data:`IDLE_SHARE` of ``timed_ms`` and :data:`IDLE_GAP_MS` a gap. A
    process that waits for a request uses about none there (its pools'
    threads sleep: ``OMP_WAIT_POLICY=PASSIVE``; the harness's return to its
    read after a reply: ~0.08 ms a gap, red team rt81), so, unlike
    :func:`deferred_work_note`, no baseline is needed: work the call left on
    a thread that slept through the harness's wait after the call
    (:mod:`kstrata.sandbox.drain`) and woke once the reply was sent (case
    tests/measure/cases/rt81_pool_tail_asleep). ``None`` below the thresholds
    or with fewer than 3 gaps."""
    gaps = candidate.idle_gap_ms
    if len(gaps) < 3:
        return None
    total = sum(gaps)
    if total <= max(IDLE_MIN_MS, IDLE_SHARE * timed_ms, IDLE_GAP_MS * len(gaps)):
        return None
    return (f"deferred work: the candidate's processes used {total:.3g} ms of CPU while waiting for the judge's "
            f"next request between their {len(gaps) + 1} timed calls ({sum(1 for g in gaps if g > 0)} gaps), against "
            f"{timed_ms:.0f} ms in the timed calls: work left running after a call returned is not in its time")


#: On the GPU, how much larger (ms, and as a share of the candidate's median
#: CUDA-event time) the candidate's median gap between the judge's wall clock
#: and its reported event time may be than the baseline's before the timing
#: is marked: both gaps are the same request round trip, but not equally long
#: (the shipped Triton softmax's gap read 0.186 ms against eager's 0.144 ms on
#: the H200, honestly: Triton's launcher returns later than PyTorch's).
CLOCK_SLACK_MS = 0.1
CLOCK_SLACK_SHARE = 0.5


def clock_gaps(candidate: Any, baseline: Any = None) -> dict[str, float]:
    """Median of the judge's wall clock minus the CUDA-event time per timed
    request (ms), for the candidate and the (remote) baseline that have event
    times: the evidence :func:`clock_note` judges, kept with the measurement."""
    out = {}
    for name, side in (("candidate", candidate), ("baseline", baseline)):
        pairs = getattr(side, "clock", None)
        if pairs:
            out[name] = statistics.median(w - d for w, d in pairs)
    return out


def clock_note(candidate: RemoteCandidate, baseline: Any = None) -> str | None:
    """A ``suspicious`` note when a GPU candidate's CUDA-event times (read in
    its own process) disagree with the judge's wall clock around the same
    requests: an event time longer than the request that contained it, or a
    median gap (wall minus event) larger than the baseline's by more than
    :data:`CLOCK_SLACK_MS` and :data:`CLOCK_SLACK_SHARE` of the candidate's
    median (time hidden from the events: a patched harness or clock). None
    when they agree or there are no event times (CPU)."""
    pairs = candidate.clock
    if not pairs:
        return None
    above = sum(1 for w, d in pairs if d > w + 0.005)
    if above:
        return (f"clock disagreement: {above} of {len(pairs)} timed calls reported a CUDA-event time longer than "
                "the judge's wall clock around the whole request")
    gaps = clock_gaps(candidate, baseline)
    gap, bgap = gaps["candidate"], gaps.get("baseline")
    if bgap is not None:
        dev = statistics.median(d for _, d in pairs)
        if gap > bgap + max(CLOCK_SLACK_MS, CLOCK_SLACK_SHARE * dev):
            return (f"clock disagreement: the judge's wall clock exceeds the candidate's CUDA-event times by "
                    f"{gap:.3g} ms (median), the baseline's by {bgap:.3g} ms over the same request path: "
                    "work outside the events is not in its time")
    return None


def choose_graphs(candidate: RemoteCandidate, baseline: Any = None, baseline_error: str | None = None
                  ) -> str | None:
    """Replay CUDA graphs on both sides of a GPU timing, or on neither: sets
    ``use_graph`` on the candidate and a remote baseline when each captured
    its copies (:meth:`RemoteCandidate.stage` with ``graph``) and a local
    baseline did too (``baseline_error`` None). Returns None when both
    replay, else why not (``"candidate: ..."`` or ``"baseline: ..."``), for
    the measurement's method."""
    remote_b = getattr(baseline, "remote", False)
    why = None
    if not candidate.graphed:
        why = f"candidate: {candidate.graph_error or 'not captured'}"
    elif baseline_error:
        why = f"baseline: {baseline_error}"
    elif remote_b and not baseline.graphed:
        why = f"baseline: {baseline.graph_error or 'not captured'}"
    candidate.use_graph = why is None
    if remote_b:
        baseline.use_graph = why is None
    return why


def _changed_inputs(sent: list[Any], back: list[Any]) -> int | None:
    """Index of the first tensor input whose values came back from a timed call
    different from what the judge staged (NaN-aware), else ``None``; a copy
    that came back missing or reshaped counts as changed."""
    import torch

    from kstrata.sandbox.redzone import same_values

    for k, x in enumerate(sent):
        if not isinstance(x, torch.Tensor):
            continue
        y = back[k] if k < len(back) else None
        if not isinstance(y, torch.Tensor) or y.shape != x.shape or y.dtype != x.dtype:
            return k
        if not same_values(torch, x, y.to(x.device)):
            return k
    return None


def _cpu_clock_id(pid: int) -> int:
    """The CPU-time clock id of process ``pid`` (all its threads, the exited
    ones included): ``(~pid << 3) | CPUCLOCK_SCHED`` as a signed 32-bit
    ``clockid_t`` (Linux ``MAKE_PROCESS_CPUCLOCK``; glibc's
    ``clock_getcpuclockid`` returns the same)."""
    cid = ((~pid) << 3 | 2) & 0xFFFFFFFF
    return cid - (1 << 32) if cid & 0x80000000 else cid


@contextmanager
def idle_reads_off_clock(proc: Any) -> Iterator[None]:
    """Make the sandbox's idle-CPU check and mark (:meth:`kstrata.sandbox.client.CandidateProcess.idle_check`,
    ``idle_mark``: psutil and ``/proc`` reads, ~0.3 ms a request on the H100 host) before and after the
    block, not inside it, for a block that puts one request of ``proc`` on the judge's clock. Inside, an
    honest Triton cross_entropy's wall-minus-event gap read 0.86 ms against eager's 0.52 ms (eager's trusted
    process makes no such reads) and its timing was marked suspicious (clock disagreement, :func:`clock_note`;
    benchmarks/results/gpu_h100_20261206b.txt); on the CPU the calibrated round trip and the timed calls
    both exclude them. A process without them (trusted, or a test's stand-in) is left alone.

    Raises
    ------
    kstrata.sandbox.client.CandidateDied
        ``"busy"``: the check found the sandbox busy over the judge's gap (its process tree killed)."""
    watched = hasattr(proc, "idle_check")
    if watched:
        proc.idle_check()
        proc.idle_paused = True
    try:
        yield
    finally:
        if watched:
            proc.idle_paused = False
    if watched:
        proc.idle_mark()


def clocked_request(proc: Any, header: dict) -> tuple[dict, list, float]:
    """``proc.ok(header)`` timed by the judge's clock (ms), the idle-CPU reads off it
    (:func:`idle_reads_off_clock`): the reply's header, its buffers and the milliseconds."""
    with idle_reads_off_clock(proc):
        t0 = time.perf_counter_ns()
        h, b = proc.ok(header)
        ms = (time.perf_counter_ns() - t0) / 1e6
    return h, b, ms


def sandbox_cpu_ms(pids: Sequence[int]) -> float:
    """CPU ms used so far by host processes ``pids`` (:func:`process_cpu_ms`)
    and by the children each has reaped (:func:`reaped_cpu_ms`); processes
    gone are left out."""
    total = 0.0
    for pid in dict.fromkeys(pids):
        own = process_cpu_ms(pid)
        if own is not None:
            total += own + reaped_cpu_ms(pid)
    return total


def reaped_cpu_ms(pid: int) -> float:
    """CPU ms used by the children host process ``pid`` has reaped (and what
    they reaped in turn): ``cutime`` + ``cstime`` of ``/proc/PID/stat``
    through psutil (clock ticks, 10 ms); 0.0 when the process is gone."""
    import psutil

    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return (t.children_user + t.children_system) * 1e3


def process_cpu_ms(pid: int) -> float | None:
    """CPU ms (user + system, every thread, exited ones included) used by
    process ``pid`` so far: its CPU-time clock (ns resolution) on Linux,
    else ``/proc/PID/stat`` (clock ticks) through psutil; None when the
    process is gone."""
    try:
        return time.clock_gettime_ns(_cpu_clock_id(pid)) / 1e6
    except (OSError, AttributeError, OverflowError):
        pass
    import psutil

    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return (t.user + t.system) * 1e3


class _RunThunk:
    """One timed call on copy ``i`` in the candidate process."""

    remote = True

    def __init__(self, owner: RemoteCandidate, i: int):
        self.owner, self.i = owner, i

    def prepare(self) -> None:
        self.owner.flush(self.i)

    def __call__(self) -> None:
        h, _ = self.owner.proc.ok({"op": "run", "i": self.i, "graph": self.owner.use_graph})
        dev = h.get("device_ms")
        self.owner.device_ms = float(dev) if isinstance(dev, (int, float)) else None
        self.owner.last_i = self.i


class RemoteTimer:
    """Times local thunks with ``local`` (a :class:`CpuTimer` or
    :class:`CudaEventTimer`) and the candidate process's thunks with the
    judge's wall clock, minus the calibrated round trip (ms).

    ``untrusted``: the candidates (:class:`RemoteCandidate`) whose processes
    are stopped whenever another thunk is timed (the baseline's, or a local
    one) and let run again just before their own: a candidate cannot take the
    CPUs from the baseline while it is timed (a spinning thread or forked
    process made an unchanged candidate read faster), nor work ahead of its
    next call."""

    def __init__(self, local: Callable[[Any], float], device: str, untrusted: Sequence[Any] = ()):
        self.local = local
        self.method = getattr(local, "method", "cpu-perf_counter")
        self.device = device
        self.untrusted = list(untrusted)

    def __call__(self, thunk: Any) -> float:
        owner = getattr(thunk, "owner", None) if getattr(thunk, "remote", False) else None
        held = []
        for u in self.untrusted:
            if owner is None or u.proc is not owner.proc:
                u.hold()
                held.append((u, u.held_cpu()))
        if owner is not None and any(u.proc is owner.proc for u in self.untrusted):
            owner.release()
        try:
            return self._time(thunk, owner)
        finally:
            for u, before in held:  # what the held candidate's processes used meanwhile: none if they stayed stopped
                u.held_cpu_ms += held_delta(before, u.held_cpu(after=True) if before is not None else None)

    def _time(self, thunk: Any, owner: Any) -> float:
        if not getattr(thunk, "remote", False):
            return self.local(thunk)
        thunk.prepare()
        owner.device_ms = None
        # the sandbox's idle-CPU reads (kstrata.sandbox.idle_cpu: psutil and /proc, ~0.3 ms a request on the H100
        # host) happen before and after the judge's clock, not inside it: inside, an honest Triton
        # cross_entropy's wall-minus-event gap read 0.86 ms against eager's 0.52 ms (eager's trusted process
        # makes none) and its timing was marked suspicious (clock disagreement; benchmarks/results/
        # gpu_h100_20261206b.txt). The candidate's CPU clocks are read inside them, next to the judge's clock:
        # read outside (7f66959), what its helpers did while the judge made those reads, off the clock, counted
        # as the call's CPU and not as a gap's (deferred_work_note): work ahead of each call and left after it,
        # unseen (red team rt77, tests/sandbox/test_rt77_sandbox_idle_window.py)
        with idle_reads_off_clock(owner.proc):
            before = owner.cpu_ms()
            if before is not None and owner._cpu_after is not None and not owner._fetched:
                owner.gap_cpu_ms.append(before - owner._cpu_after)
            waited = getattr(getattr(owner.proc, "idle_cpu", None), "waited_ms", None)
            if waited is not None and owner._waited_at is not None:
                owner.idle_gap_ms.append(waited - owner._waited_at)
            owner._waited_at = waited
            owner._fetched = False
            t0 = time.perf_counter_ns()
            thunk()
            ms = (time.perf_counter_ns() - t0) / 1e6
            owner._cpu_after = owner.cpu_ms()
        dev = owner.device_ms
        owner.after_call(thunk.i)
        if self.device.startswith("cuda"):
            if dev is None:
                raise TimedOutputMismatch("a timed call on the GPU answered without its CUDA-event time",
                                          {"call": owner.calls})
            owner.clock.append((ms, dev))
            return max(dev, CLAMP_MS)
        return max(ms - owner.overhead_ms, CLAMP_MS)
