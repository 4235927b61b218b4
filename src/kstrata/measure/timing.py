"""The one timing module: paired, interleaved, cache-flushed timing with statistics.

Every time kstrata reports comes from :func:`measure`. A candidate (A) and its
baseline (B) are timed in the same process, interleaved ``A B A B ...`` after a
warm-up, so slow drifts (clock frequency, thermal state, noisy neighbours)
affect both alike and cancel in the per-pair ratio. Before each timed call a
buffer larger than the last-level cache is written (CPU) or a 256 MiB buffer is
zeroed (GPU, as ``triton.testing.do_bench``), and inputs rotate through several
copies so no call reads an input the previous call left in cache.

The number of repetitions comes from a time budget (as ``do_bench``'s ``rep``):
the warm-up estimates one round's wall-clock cost (timed calls plus the flushes
around them) and ``reps = budget_ms / round_cost``,
clamped to ``[min_reps, max_reps]``. When either side's relative IQR in an
attempt exceeds ``rel_iqr_threshold``, another attempt with twice the pairs is
run (at most ``max_remeasure`` times). Every pair counts: the result pools all
attempts (the median of paired ratios tolerates up to half of the pairs being
disturbed), and each attempt's spread is recorded; ``noisy`` says whether the
last attempt was still above the threshold.

Timers
------
* CPU: :func:`time.perf_counter_ns` around the call.
* CUDA: events recorded before the call and after a *device-wide*
  ``torch.cuda.synchronize()``, so work the call put on other streams is counted
  (the price is the host's synchronize latency, a few microseconds).
* CUDA graphs (optional): one graph captured per input copy, replayed in
  rotation; capture happens before timing.

Compilation and set-up are the caller's job and never happen here: a callable
handed to :func:`measure` is already built.
"""

from __future__ import annotations

import gc
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import torch

from kstrata.measure import environment
from kstrata.measure.cache_flush import CacheFlusher, llc_bytes
from kstrata.measure.contention import ContentionProbe
from kstrata.measure.stats import (
    PROCESS_PLACEMENT,
    PROCESS_PLACEMENT_CPU,
    RatioCI,
    Spread,
    paired_ratio_ci,
    summarize,
    with_placement,
)

Thunk = Callable[[], Any]


@dataclass(frozen=True)
class TimingConfig:
    """How to time. Times in ms.

    Attributes
    ----------
    warmup_ms:
        Untimed-for-the-result rounds run until their cost (timed or wall clock) reaches this
        (at least ``min_warmup`` rounds); they also estimate a round's cost.
    budget_ms:
        Target wall-clock time per attempt: the rounds' timed calls plus what
        each round costs around them (cache flushes, input rotation), so a
        0.3 ms kernel whose 64 MiB flush takes 8 ms gets as many rounds as fit
        the budget, not 15x more.
    min_reps, max_reps:
        Bounds on rounds (pairs) per attempt.
    flush:
        Evict caches before every timed call.
    flush_bytes:
        Flush buffer size; None = 2 x LLC on CPU, 256 MiB on CUDA.
    input_copies:
        Copies of the inputs to rotate through; None = enough that their total
        exceeds 2 x LLC, odd, at least 3, at most 15, capped by ``max_input_bytes``.
    threads:
        Intra-op threads (torch, OpenMP, TVM); None = all CPUs this process may use.
    rel_iqr_threshold:
        An attempt whose IQR/median exceeds this on either side is re-measured.
    max_remeasure:
        Extra attempts allowed when noisy.
    confidence, n_resamples, seed:
        Bootstrap interval of the speedup (see :func:`kstrata.measure.stats.paired_ratio_ci`).
    cuda_graph:
        On CUDA, replay captured graphs (one per input copy) instead of calling
        the function: the time is then the GPU work alone, without the host's
        launch (Python, the kernel launcher), as ``triton.testing.do_bench_cudagraph``
        measures. ``None`` (default): a candidate timed in its sandboxed process
        is replayed when both it and the baseline can be captured (else neither
        is, and ``Measurement.method`` says why); a local callable is called.
        ``False``: never; ``True``: always where possible.
    """

    warmup_ms: float = 50.0
    budget_ms: float = 1000.0
    min_warmup: int = 2
    min_reps: int = 10
    max_reps: int = 2000
    flush: bool = True
    flush_bytes: int | None = None
    input_copies: int | None = None
    max_input_bytes: int = 1 << 30
    threads: int | None = None
    rel_iqr_threshold: float = 0.10
    max_remeasure: int = 2
    confidence: float = 0.95
    n_resamples: int = 2000
    seed: int = 0
    cuda_graph: bool | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Measurement:
    """One timing result and how it was obtained (JSON-serializable).

    Attributes
    ----------
    method:
        ``"cpu-perf_counter"``, ``"cuda-event"`` or ``"cuda-graph"``.
    device:
        e.g. ``"cpu: AMD EPYC 9R14"``.
    reps, warmup_reps:
        Rounds timed (all attempts) and rounds of warm-up.
    candidate, baseline:
        Spreads in ms (``baseline`` is None for a single-callable timing).
    speedup:
        ``baseline / candidate`` with its bootstrap interval, or None.
    candidate_ms, baseline_ms:
        All samples, in timed order (pair ``i`` = index ``i``).
    attempts:
        Per attempt: reps and relative IQR of each side.
    remeasured:
        How many extra attempts the noise check caused.
    noisy:
        True when even the last attempt exceeds ``rel_iqr_threshold``.
    flush, input_copies, settings, versions, config:
        What was done and under which settings.
    suspicious:
        Reasons to distrust the result (e.g. faster than the roofline floor).
    roofline:
        Roofline positions (see :mod:`kstrata.measure.roofline`), if computed.
    labels:
        Names of the candidate and baseline.
    counters:
        Profiler counters per call (``perf`` on CPU), or why there are none.
    findings:
        :class:`kstrata.measure.profilers.findings.Finding` dicts for the agents.
    retimes:
        The other timings of the same call when a doubtful timing was timed
        again (:func:`kstrata.measure.retime.retimed`): ``to_dict()`` of each,
        or ``{"error": ...}`` for one that failed; empty when none was taken.
    """

    method: str
    device: str
    reps: int
    warmup_reps: int
    candidate: Spread
    baseline: Spread | None
    speedup: RatioCI | None
    candidate_ms: list[float]
    baseline_ms: list[float]
    attempts: list[dict]
    remeasured: int
    noisy: bool
    flush: dict
    input_copies: int
    settings: dict
    versions: dict
    config: dict
    suspicious: list[str] = field(default_factory=list)
    roofline: dict | None = None
    labels: dict = field(default_factory=dict)
    counters: dict | None = None
    findings: list[dict] = field(default_factory=list)
    retimes: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict) -> "Measurement":
        d = dict(d)
        d["candidate"] = Spread(**d["candidate"])
        d["baseline"] = Spread(**d["baseline"]) if d.get("baseline") else None
        d["speedup"] = RatioCI(**d["speedup"]) if d.get("speedup") else None
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})

    @classmethod
    def from_json(cls, text: str) -> "Measurement":
        return cls.from_dict(json.loads(text))

    def summary(self) -> str:
        """One line: medians, speedup with interval, repetitions."""
        text = f"candidate {self.candidate.median:.4g} ms (IQR {self.candidate.iqr:.2g})"
        if self.baseline and self.speedup:
            s = self.speedup
            text += (f", baseline {self.baseline.median:.4g} ms, speedup {s.point:.3f}x "
                     f"[{s.low:.3f}, {s.high:.3f}] {int(s.confidence * 100)}% CI")
        text += f", {self.reps} pairs" if self.baseline else f", {self.reps} reps"
        if self.noisy:
            text += ", NOISY"
        return text


# -- timers ----------------------------------------------------------------------
class CpuTimer:
    """Flush, then time one call with :func:`time.perf_counter_ns` (ms)."""

    method = "cpu-perf_counter"

    def __init__(self, flusher: CacheFlusher):
        self.flusher = flusher

    def __call__(self, thunk: Thunk) -> float:
        self.flusher.flush()
        t0 = time.perf_counter_ns()
        thunk()
        return (time.perf_counter_ns() - t0) / 1e6


class CudaEventTimer:
    """Flush the L2, then time one call with CUDA events around a device-wide sync (ms)."""

    method = "cuda-event"

    def __init__(self, flusher: CacheFlusher):
        self.flusher = flusher
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def __call__(self, thunk: Thunk) -> float:
        self.flusher.flush()
        self.start.record()
        thunk()
        torch.cuda.synchronize()  # device-wide: counts work on every stream
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end)


# -- the core loop (pure logic; timers are injected) ----------------------------------
def run_interleaved(
    a: Sequence[Thunk], b: Sequence[Thunk] | None, timer: Callable[[Thunk], float], reps: int,
    start: int = 0,
) -> tuple[list[float], list[float]]:
    """Time ``reps`` rounds ``A B`` (or just ``A``), rotating through the thunks.

    Parameters
    ----------
    a, b:
        One zero-argument callable per input copy. Calls are numbered ``j``
        globally (A of round ``r`` is ``j = 2r``, B is ``j = 2r + 1``) and call
        ``j`` uses copy ``j % len``, so B never reads the copy A just touched.
    timer:
        Times one call, returning ms (flushing before it if it flushes).
    reps:
        Number of rounds.

    Returns
    -------
    (a_ms, b_ms)
        Sample lists of length ``reps`` (``b_ms`` empty if ``b`` is None).
    """
    a_ms: list[float] = []
    b_ms: list[float] = []
    for r in range(start, start + reps):
        a_ms.append(timer(a[(2 * r) % len(a)]))
        if b is not None:
            b_ms.append(timer(b[(2 * r + 1) % len(b)]))
    return a_ms, b_ms


def under_floor(median_ms: float, floor_ms: float | None, note: str = "") -> list[str]:
    """The suspicious-timing finding for a median under the roofline floor
    (``[]`` when it is not, or there is no floor); ``note`` qualifies the floor."""
    if floor_ms is None or median_ms >= floor_ms:
        return []
    return [f"candidate median {median_ms:.4g} ms is below the roofline floor {floor_ms:.4g} ms{note}: "
            "it cannot have done the task's work (cached result, skipped work, or a timing escape)"]


#: The share of a side's timed calls at the clamp from which :func:`clamped_note` speaks
CLAMPED_SHARE = 0.1


def clamped_note(a_ms: Sequence[float], b_ms: Sequence[float] | None) -> str:
    """The suspicious-timing note when :data:`CLAMPED_SHARE` or more of the
    candidate's (``a_ms``) or the baseline's (``b_ms``) timed calls read the
    clamp :data:`kstrata.measure.remote.CLAMP_MS`: calls whose round trip was
    no longer than the calibrated round trip of an empty request, subtracted
    from each. ``""`` otherwise. Queue round rt89 (rmsnorm on tvm-llvm, 2 CPUs
    at load 9): 11 of the candidate's 30 calls and 2 of the baseline's read
    1e-06 ms, and the prompt showed "5.13x (95% interval 1.15-9.23e+06)" and
    a 1.197 ms median that no call took."""
    from kstrata.measure.remote import CLAMP_MS

    parts = []
    for who, xs in (("the candidate's", a_ms), ("the baseline's", b_ms or ())):
        k = sum(1 for x in xs if x <= CLAMP_MS)
        if xs and k >= CLAMPED_SHARE * len(xs):
            parts.append(f"{k} of {who} {len(xs)} timed calls")
    if not parts:
        return ""
    return (f"{' and '.join(parts)} took no longer than the calibrated round trip to their process (subtracted "
            "from each call) and read as 0 ms: the round trip itself moved with the machine's load, so the "
            "median, the speedup and its interval are not readings of the kernel")


def choose_reps(round_ms: float, config: TimingConfig) -> int:
    """Rounds that fit ``config.budget_ms`` given one round's estimated time."""
    if round_ms <= 0:
        return config.max_reps
    return int(min(config.max_reps, max(config.min_reps, math.floor(config.budget_ms / round_ms))))


def _median(x: Sequence[float]) -> float:
    return sorted(x)[len(x) // 2]


def measure_thunks(
    a: Sequence[Thunk], b: Sequence[Thunk] | None, timer: Callable[[Thunk], float],
    config: TimingConfig,
) -> dict:
    """Warm up, choose repetitions, time, re-measure (doubling the pairs) while noisy.

    The pure part of :func:`measure` (timers are injected, nothing CUDA- or
    environment-specific), so it runs in tests with fake timers.

    Returns
    -------
    dict
        ``a_ms``, ``b_ms`` (all attempts pooled), ``reps`` (pairs pooled), ``warmup_reps``,
        ``attempts``, ``remeasured``, ``noisy``.
    """
    warm_a: list[float] = []
    warm_b: list[float] = []
    n = 0
    walls: list[float] = []
    while n < config.min_warmup or max(sum(warm_a) + sum(warm_b), sum(walls)) < config.warmup_ms:
        t0 = time.perf_counter()
        wa, wb = run_interleaved(a, b, timer, 1, start=n)
        walls.append((time.perf_counter() - t0) * 1e3)
        warm_a += wa
        warm_b += wb
        n += 1
        if n >= config.max_reps:
            break
    # the later half of the warm-up estimates the steady state; a round costs at
    # least its timed calls (fake timers in tests report more than the wall clock)
    half = slice(n // 2, None)
    round_ms = _median(warm_a[half]) + (_median(warm_b[half]) if b is not None else 0.0)
    reps = choose_reps(max(round_ms, _median(walls[half])), config)

    attempts: list[dict] = []
    all_a: list[float] = []
    all_b: list[float] = []
    start = n
    worst = 0.0
    for attempt in range(1 + config.max_remeasure):
        k = min(config.max_reps, reps * 2**attempt)  # each re-measure doubles the pairs
        a_ms, b_ms = run_interleaved(a, b, timer, k, start=start)
        start += k
        all_a += a_ms
        all_b += b_ms
        rel_a = summarize(a_ms).rel_iqr
        rel_b = summarize(b_ms).rel_iqr if b is not None else 0.0
        worst = max(rel_a, rel_b)
        attempts.append({"reps": k, "rel_iqr_candidate": rel_a, "rel_iqr_baseline": rel_b})
        if worst <= config.rel_iqr_threshold:
            break
    return {
        "a_ms": all_a, "b_ms": all_b, "reps": len(all_a), "warmup_reps": n,
        "attempts": attempts, "remeasured": len(attempts) - 1,
        "noisy": worst > config.rel_iqr_threshold,
    }


# -- inputs --------------------------------------------------------------------------
def input_bytes(inputs: Sequence[Any]) -> int:
    """Bytes of the tensors in ``inputs``."""
    return sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))


def n_input_copies(inputs: Sequence[Any], config: TimingConfig) -> int:
    """How many input copies to rotate (see :attr:`TimingConfig.input_copies`).

    The automatic count is odd (at least 3): A takes copy ``2r mod n`` and B
    copy ``2r + 1 mod n``, so with ``n`` odd each side cycles through every
    copy, and a property of one buffer (its alignment, huge pages, cache-set
    mapping) cannot bias one side of the comparison.
    """
    if config.input_copies is not None:
        return max(1, config.input_copies)
    size = max(1, input_bytes(inputs))
    want = max(3, min(15, math.ceil(2 * (llc_bytes() or 0) / size)))
    n = max(1, min(want, config.max_input_bytes // size))
    return n if n % 2 or n == 1 else n - 1


def rotating_inputs(inputs: Sequence[Any], copies: int) -> list[list[Any]]:
    """``copies`` sets of inputs: the originals, then clones of every tensor."""
    out = [list(inputs)]
    for _ in range(copies - 1):
        out.append([x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    return out


def _thunks(fn: Callable[..., Any], sets: list[list[Any]]) -> list[Thunk]:
    return [(lambda s=s: fn(*s)) for s in sets]


def _graph_thunks(fn: Callable[..., Any], sets: list[list[Any]]) -> list[Thunk]:
    """One captured CUDA graph per input set (warm-up on a side stream, as the
    PyTorch CUDA-graph docs require); the thunk replays it."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for s in sets:
            fn(*s)
    torch.cuda.current_stream().wait_stream(side)
    graphs = []
    for s in sets:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn(*s)
        graphs.append(g)
    torch.cuda.synchronize()
    return [g.replay for g in graphs]


# -- the public entry point -----------------------------------------------------------------
def measure(
    candidate: Callable[..., Any],
    inputs: Sequence[Any],
    baseline: Callable[..., Any] | None = None,
    config: TimingConfig | None = None,
    *,
    device: str | None = None,
    labels: dict | None = None,
    floor_ms: float | None = None,
    input_sets: list[list[Any]] | None = None,
) -> Measurement:
    """Time ``candidate(*inputs)``, paired with ``baseline(*inputs)`` if given.

    Parameters
    ----------
    candidate, baseline:
        Built callables taking ``inputs`` (compilation already done).
    inputs:
        One set of call arguments; tensors are cloned into rotating copies.
    config:
        :class:`TimingConfig` (defaults if None).
    device:
        ``"cpu"`` or ``"cuda[:N]"``; default: the device of the first tensor input.
    labels:
        Names recorded as ``labels`` (e.g. ``{"candidate": "tvm", "baseline": "eager"}``).
    floor_ms:
        The roofline floor of one call; a candidate median below it is recorded
        in ``suspicious``.
    input_sets:
        The rotating input copies, each with its own values (so a memo keyed on
        input values cannot serve a timed call); default: clones of ``inputs``.

    A ``candidate`` that is a :class:`kstrata.measure.remote.RemoteCandidate`
    runs in its candidate process: its copies are sent there, each timed call
    is timed by this process's clock (minus the calibrated round trip), and
    checked calls' outputs are compared with the oracle
    (:class:`~kstrata.measure.remote.TimedOutputMismatch` on a difference).

    Returns
    -------
    Measurement
    """
    config = config or TimingConfig()
    if device is None:
        device = next((str(x.device) for x in inputs if isinstance(x, torch.Tensor)), "cpu")
    cuda = device.startswith("cuda")
    if not cuda:
        environment.fix_threads(config.threads)
    if input_sets:
        sets = [list(s) for s in input_sets]
        copies = len(sets)
    else:
        copies = n_input_copies(inputs, config)
        sets = rotating_inputs(inputs, copies)
    flusher = CacheFlusher(config.flush_bytes, device="cuda" if cuda else "cpu", enabled=config.flush)
    if cuda:
        timer: Callable[[Thunk], float] = CudaEventTimer(flusher)
        make = _graph_thunks if config.cuda_graph else _thunks
        method = "cuda-graph" if config.cuda_graph else timer.method  # type: ignore[attr-defined]
    else:
        timer, make, method = CpuTimer(flusher), _thunks, CpuTimer.method
    remote = getattr(candidate, "remote", False)
    # sandboxed GPU timing replays CUDA graphs unless told not to (both sides, or neither)
    want_graph = cuda and remote and config.cuda_graph is not False
    graph_note = None
    if remote:
        from kstrata.measure.remote import RemoteTimer

        # on the CPU the judge flushes (remote.RemoteCandidate.flush): the candidate's processes then do
        # nothing between calls but a freshen, so work they leave running shows (remote.deferred_work_note)
        candidate.judge_flusher = None if cuda else flusher
        candidate.stage(sets, config.flush_bytes, config.flush and cuda, graph=want_graph)
        candidate.calibrate()
        a = candidate.thunks(len(sets))
        timer = RemoteTimer(timer, device, untrusted=[candidate])
        # CPU: the judge's clock around each request, minus the calibrated round trip; GPU: CUDA events
        # recorded in the candidate's process around the call and a device-wide sync, as CudaEventTimer
        # does locally (a round trip of ~0.1-0.2 ms swamped kernels of tens of microseconds), held
        # against the judge's clock around the same request (remote.clock_note)
        method = ("cuda-event, checked by the judge's clock" if cuda else "judge-clock/perf_counter") + (
            " (candidate and baseline processes)" if getattr(baseline, "remote", False) else " (candidate process)")
    else:
        a = make(candidate, sets)
    if getattr(baseline, "remote", False):
        from kstrata.measure.remote import RemoteTimer

        baseline.judge_flusher = None if cuda else flusher
        baseline.mirror_fetch = remote  # its outputs fetched as the candidate's are (remote.fetch_work_note)
        baseline.stage(sets, config.flush_bytes, config.flush and cuda, graph=want_graph and candidate.graphed)
        held = None
        if remote:
            candidate.hold()  # the baseline's round trip is calibrated with the candidate stopped
            held = candidate.held_cpu()
        try:
            baseline.calibrate()
        finally:
            if remote:
                from kstrata.measure.remote import held_delta

                # a process that stays stopped uses none (remote.ran_while_held)
                candidate.held_cpu_ms += held_delta(held, candidate.held_cpu(after=True) if held is not None else None)
                candidate.release()
        b = baseline.thunks(len(sets))
        if remote:
            # The same request path in the baseline's process bounds the candidate's: a candidate that
            # slows its own empty round trip (a thread holding the GIL during calibration) would have the
            # inflated overhead subtracted from every timed call.
            candidate.overhead_ms = min(candidate.overhead_ms, baseline.overhead_ms)
        else:
            timer = RemoteTimer(timer, device)
    elif baseline is not None and want_graph and candidate.graphed:
        try:
            b = _graph_thunks(baseline, sets)
        except Exception as e:  # noqa: BLE001 - the baseline cannot be captured: neither side replays
            b, graph_note = _thunks(baseline, sets), f"{type(e).__name__}: {str(e)[:200]}"
    else:
        b = make(baseline, sets) if baseline is not None else None
    if want_graph:
        from kstrata.measure.remote import choose_graphs

        graph_note = choose_graphs(candidate, baseline, graph_note)
        if graph_note is None:
            method = method.replace("cuda-event", "cuda-graph replay, cuda-event", 1)
        else:
            if b is not None and not getattr(baseline, "remote", False) and config.cuda_graph:
                b = _thunks(baseline, sets)  # a local baseline is not replayed when the candidate is not
            method += f" (no CUDA graph: {graph_note})"

    gc_was = gc.isenabled()
    gc.collect()
    gc.disable()
    probe = ContentionProbe(threads=1 if cuda else torch.get_num_threads())
    try:
        with torch.inference_mode():
            r = measure_thunks(a, b, timer, config)
            if remote:
                candidate.release()
                candidate.check_last()
                candidate.probe()  # the verification's other draws, in the timing's state
                from kstrata.measure.remote import ran_while_held

                ran_while_held(candidate)
    finally:
        if remote:
            candidate.release()
        if gc_was:
            gc.enable()

    cand = summarize(r["a_ms"])
    base = summarize(r["b_ms"]) if baseline is not None else None
    speedup = None
    if baseline is not None:
        speedup = paired_ratio_ci(r["b_ms"], r["a_ms"], confidence=config.confidence,
                                  n_resamples=config.n_resamples, seed=config.seed)
        if remote or getattr(baseline, "remote", False):
            # candidate and baseline in different processes: an A/A pair differs by a few percent
            speedup = with_placement(speedup, PROCESS_PLACEMENT if cuda else PROCESS_PLACEMENT_CPU)
    suspicious = under_floor(cand.median, floor_ms)
    clamped = clamped_note(r["a_ms"], r["b_ms"] if baseline is not None else None) if remote else ""
    if clamped:
        suspicious.append(clamped)
    if remote and getattr(baseline, "remote", False):
        from kstrata.measure.remote import untimed_work_note

        untimed = untimed_work_note(candidate, baseline)
        if untimed:
            suspicious.append(untimed)
        from kstrata.measure.remote import deferred_work_note

        deferred = deferred_work_note(candidate, baseline, float(sum(r["a_ms"])))
        if deferred:
            suspicious.append(deferred)
        from kstrata.measure.remote import fetch_work_note

        fetched = fetch_work_note(candidate, baseline, r["a_ms"], r["b_ms"])
        if fetched:
            suspicious.append(fetched)
    if remote:
        from kstrata.measure.remote import checked_path_note, left_running_note

        idle = left_running_note(candidate, float(sum(r["a_ms"])))
        if idle:
            suspicious.append(idle)
        other = checked_path_note(candidate, cand.median)
        if other:
            suspicious.append(other)
    if remote and cuda:
        from kstrata.measure.remote import clock_gaps, clock_note

        disagree = clock_note(candidate, baseline if getattr(baseline, "remote", False) else None)
        if disagree:
            suspicious.append(disagree)
    contended = probe.note()
    if contended:
        suspicious.append(contended)
    return Measurement(
        method=method,
        device=environment.device_name(device),
        reps=r["reps"],
        warmup_reps=r["warmup_reps"],
        candidate=cand,
        baseline=base,
        speedup=speedup,
        candidate_ms=r["a_ms"],
        baseline_ms=r["b_ms"],
        attempts=r["attempts"],
        remeasured=r["remeasured"],
        noisy=r["noisy"],
        flush={**flusher.describe(), "calls": flusher.calls,
               **({"candidate_ipc_overhead_ms": candidate.overhead_ms, "timed_calls_checked": candidate.checked,
                   "probes_checked": candidate.probed, "held_cpu_ms": candidate.held_cpu_ms}
                  if remote else {}),
               **({"clock_gap_ms": clock_gaps(candidate, baseline)} if remote and cuda else {})},
        input_copies=copies,
        settings=environment.settings(device),
        versions=environment.versions(),
        config=config.to_dict(),
        suspicious=suspicious,
        labels=dict(labels or {}),
    )
