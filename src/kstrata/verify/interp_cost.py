"""How long a verification under an interpreter backend may take, said before it runs.

Triton's CPU interpreter (``triton-interp``, ``TRITON_INTERPRET=1``) runs
every program of a launch in Python, one tile operation at a time, so a
verification that takes seconds on a GPU takes minutes here: a task without
shapes metadata verified at 1025 x 513 took 442 s with no word beforehand
(newcomer nc11). The judge's own cost is estimated by running the reference
(:mod:`kstrata.verify.reference`), but the candidate's cannot be, before it
runs (kstrata's process never runs candidate code), and under the
interpreter it depends on the kernel's grid and loops far more than on the
task. So the estimate is a range over kinds of kernels, from the bytes the
task's reference moves at every planned test shape:

    seconds = FIXED_S + PER_TEST_S * tests + CALLS_PER_TEST * sum over tests of bytes(shape) * rate

with ``rate`` from :data:`RATES_S_PER_BYTE`, measured with the interpreter on
this project's 2-core AMD EPYC machine (2026-12-04, triton 3.x, shipped
kernels and a newcomer's, at 1024 x 512 and 64 x 4096 fp32): an elementwise
kernel (``relu``, 1024-element blocks) 0.063 us/B; a program per row that
holds the row in one block (``rmsnorm``, ``softmax`` at 512 columns)
0.08-0.40 us/B; a softmax looping over 64-wide tiles in three passes per row
4.2-6.3 us/B. A GEMM's cost follows its FLOPs more than its bytes, so the
range says less there.

The interpreter's time follows the number of programs (elements / BLOCK for an
elementwise kernel) times the operations in each, far more than the bytes: a
newcomer's scaled tanh (about 20 tile operations, ``BLOCK = 64``) was
announced at "49 s for an elementwise one" and took 181 s (newcomer nc16).
Measured here (2026-12-05, 1024 x 512 fp32, one thread): 5.3 ms a program
at 64- and at 1024-element blocks alike, so 10.4 us/B at ``BLOCK = 64`` and
0.58 us/B at ``BLOCK = 1024`` at load 4.6 on 2 CPUs, 4.5 us/B idle at 64
(:data:`RATES_S_PER_BYTE` ``"small_blocks"``; 4.5 us/B x 2 calls x 18.4 MB
is 166 s plus the fixed costs, 184 s, against the newcomer's 181 s and 176 s
measured again here at load 1 on 2 CPUs). kstrata's own
process never reads the candidate's block size, so the note gives the range
and says which end a small block size lands at; it is an estimate, said so.
"""

from __future__ import annotations

import math
import os
from typing import Any

#: Interpreter seconds per byte the reference moves in one call (module docstring): an elementwise
#: kernel with 1024-element blocks, one program per row with the row in one block, an elementwise kernel of
#: about 20 tile operations with 64-element blocks (16 times the programs), a loop over small tiles in each row.
RATES_S_PER_BYTE = {"low": 0.06e-6, "typical": 0.4e-6, "small_blocks": 4.5e-6, "high": 6e-6}
#: Candidate calls per test: the judge calls the candidate once under each poison pattern
#: (:data:`kstrata.verify.runner.POISON_PATTERNS`).
CALLS_PER_TEST = 2
#: Seconds each test costs whatever its size (the judge's oracle and comparison, a round trip to the
#: candidate's process, the interpreter's per-launch set-up), and once per verification (sandbox start,
#: the candidate's import and first compile): a --scope small rmsnorm (192 tests of a few kB) estimated
#: "about 2 s" from its bytes and took 18.5 s (newcomer nc12, this 2-core EPYC under load 3-8).
PER_TEST_S = 0.08
FIXED_S = 4.0
#: A verification whose typical or small-block estimate is at least this many seconds is announced.
WARN_S = 60.0
#: Bytes per call of the smaller shape suggested for the task's metadata (a ~100-test plan then
#: takes well under a minute at the typical rate).
SUGGEST_BYTES = 512e3


def plan_bytes(task: Any, scope: str, secret: str = "estimate") -> tuple[int, float] | None:
    """The number of tests and the bytes the reference moves over all of them
    (per call, summed over the tests) in a verification at ``scope``, as
    :func:`kstrata.verify.runner.run_protocol` plans it (public, hidden,
    secret perturbations, size-1, octave and scale-tail probes; the nominal shape is not run on
    an interpreter). ``secret`` only moves the perturbed sizes by a few.
    None when the task's byte count is unknown at some shape. Kept per task
    text, metadata, scope and secret in this process (``eval`` asks for the
    warning and for the refusal, ``optimize`` for two scopes' notes)."""
    from kstrata.tasks.scaled import shape_mode

    key = (task.digest, str(task.path), task.meta.model_dump_json(), shape_mode(), scope, secret)
    if key not in _PLANNED:
        _PLANNED[key] = _plan_bytes(task, scope, secret)
    return _PLANNED[key]


_PLANNED: dict[tuple, tuple[int, float] | None] = {}


def _plan_bytes(task: Any, scope: str, secret: str) -> tuple[int, float] | None:
    from kstrata.verify.plan import (
        hidden_tests,
        octave_tests,
        perturbed_shapes,
        public_tests,
        screening_shapes,
        unit_tests,
    )
    from kstrata.verify.residue_probes import residue_tests
    from kstrata.verify.scale_tails import tail_tests

    base = screening_shapes(task) if scope == "small" else task.sweep_shapes
    extra = perturbed_shapes(task, secret, base=task.small_shapes if scope == "small" else base)
    tests = public_tests(task) + hidden_tests(task, secret, extra, base=base)
    tests += unit_tests(task, secret, base, extra) + octave_tests(task, secret, base, extra)
    tests += residue_tests(task, secret, base, extra)
    tests += tail_tests(task, secret, [*base, *extra])
    total = 0.0
    for t in tests:
        b = task.bytes(t.shape_dict)
        if not b:
            return None
        total += b
    return len(tests), total


def _duration(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


#: Samples of ``procs_running`` (``/proc/stat``) :func:`machine_load` takes, and the seconds between them.
RUNNABLE_SAMPLES = 5
RUNNABLE_GAP_S = 0.01


def _runnable_now() -> float | None:
    """The median of :data:`RUNNABLE_SAMPLES` readings of ``procs_running``
    (``/proc/stat``: tasks running or waiting for a CPU now, this one
    included), :data:`RUNNABLE_GAP_S` apart (about 40 ms); None off Linux."""
    import statistics
    import time

    seen = []
    for i in range(RUNNABLE_SAMPLES):
        if i:
            time.sleep(RUNNABLE_GAP_S)
        try:
            with open("/proc/stat") as f:
                line = next((ln for ln in f if ln.startswith("procs_running ")), None)
        except OSError:
            return None
        if line is None:
            return None
        seen.append(int(line.split()[1]))
    return float(statistics.median(seen))


#: Seconds :func:`machine_load` keeps its reading (one eval's estimates, at two scopes, read it once).
LOAD_KEPT_S = 2.0
_LOAD: list = []  # [(time.monotonic(), reading)]


def machine_load() -> tuple[float, str] | None:
    """The machine's load for an estimate of CPU-bound work, and which figure
    it is: the lowest of the 1- and 5-minute load averages and the runnable
    tasks now (:func:`_runnable_now`), as ``(tasks, words)``; None when none
    can be read. A reading is kept :data:`LOAD_KEPT_S` seconds, so that an
    estimate's factor and the figure it names are one reading.

    Why the lowest: the 1-minute average alone followed a spike (newcomer
    nc25: load 175 on 2 CPUs announced "about 94 min" for a verification
    that took 2 minutes). The 5-minute average lags a spike; Linux's load
    averages also count tasks blocked on disk (state D), which take no CPU,
    while ``procs_running`` counts only tasks that run or wait for a CPU, but
    at one instant, hence its median over a few readings. A load that is
    really high is high in all three."""
    import time

    if _LOAD and time.monotonic() - _LOAD[0][0] < LOAD_KEPT_S:
        return _LOAD[0][1]
    figures = []
    try:
        one, five, _ = os.getloadavg()
        figures += [(one, "1-minute load average"), (five, "5-minute load average")]
    except (OSError, AttributeError):
        pass
    runnable = _runnable_now()
    if runnable is not None:
        figures.append((runnable, "tasks runnable now (median of a few readings)"))
    reading = min(figures, key=lambda f: f[0]) if figures else None
    _LOAD[:] = [(time.monotonic(), reading)]
    return reading


def busy_factor() -> float:
    """How much slower than on an idle machine a CPU-bound process runs now:
    the load (:func:`machine_load`, which names its figure) over the CPUs
    this process may use, at least 1 (newcomer nc14: at load 4-8 on 2 CPUs an
    estimate of 62 s took 277 s); 1 when no load can be read."""
    from kstrata.execute.cpus import allowed_cpu_count

    seen = machine_load()
    return 1.0 if seen is None else max(1.0, seen[0] / max(1, allowed_cpu_count()))


def estimate(task: Any, scope: str) -> dict[str, Any] | None:
    """``{"tests", "megabytes", "low_s", "typical_s", "small_blocks_s", "high_s", "busy", "load_figure"}``
    of a verification at ``scope`` under the interpreter (module docstring; s,
    scaled by :func:`busy_factor`, which ``busy`` gives, from the load figure
    ``load_figure`` names), or None when the task's byte counts are unknown."""
    planned = plan_bytes(task, scope)
    if planned is None:
        return None
    n, total = planned
    fixed = FIXED_S + PER_TEST_S * n
    busy = busy_factor()
    figure = (machine_load() or (0.0, "load"))[1]
    return {"tests": n, "megabytes": round(total / 1e6, 1), "busy": round(busy, 2), "load_figure": figure,
            **{f"{k}_s": round(busy * (fixed + CALLS_PER_TEST * total * r), 1) for k, r in RATES_S_PER_BYTE.items()}}


def smaller_shape(task: Any, shape: dict[str, int], limit: float = SUGGEST_BYTES) -> dict[str, int] | None:
    """``shape`` with its largest size variable halved (at least 8) until one
    reference call moves at most ``limit`` bytes; None when none can be
    halved or the byte count is unknown."""
    shape = dict(shape)
    for _ in range(40):
        b = task.bytes(shape)
        if not b:
            return None
        if b <= limit:
            return shape
        big = max((k for k in shape if not k.startswith("@") and shape[k] >= 16), key=lambda k: shape[k],
                  default=None)
        if big is None:
            return None
        shape[big] //= 2
    return None


def over_limit(task: Any, backend: Any, scope: str, timeout_s: float | None) -> dict[str, Any] | None:
    """The :func:`estimate` of a verification under an interpreter backend
    that even the fastest kind of kernel (``low_s``, an elementwise one) would
    not finish within ``timeout_s`` (s): it would end in ``timeout`` without a
    verdict on the kernel (newcomer nc15: it ran 611 s and tested nothing);
    None for a compiled backend, no limit, unknown byte counts or an estimate
    within it. Not the typical estimate: that range spans two orders of
    magnitude over kinds of kernels, and a suite softmax estimated at 45 min on
    a loaded machine finished within its 600 s."""
    if getattr(backend, "timing_meaningful", True) or not timeout_s:
        return None
    try:
        est = estimate(task, scope)
    except Exception:  # noqa: BLE001 - an estimate that cannot be made says nothing
        return None
    # the idle machine's low end: the load now scales the estimate, not what the kernel can do (a suite softmax
    # estimated at 11 min for an elementwise kernel at load 5.5 finished within its 600 s)
    return est if est is not None and est["low_s"] / max(est["busy"], 1.0) > timeout_s else None


def suggested_timeout(est: dict[str, Any]) -> int:
    """A ``--timeout`` (s, whole minutes) that a verification of :func:`estimate`
    ``est`` fits in for a kernel with small blocks as well as a typical one:
    1.5 times the larger of the two estimates."""
    return math.ceil(max(est["typical_s"], est["small_blocks_s"]) * 1.5 / 60) * 60


def slow_note(task: Any, backend: Any, scope: str, timeout_s: float | None = None,
              what: str = "this verification", scope_option: str | None = "--scope small",
              always: bool = False) -> str | None:
    """A warning to print before a verification under an interpreter backend
    (``backend.timing_meaningful`` False) whose typical or small-block
    estimate is at least :data:`WARN_S`: how long it may take and how to make it shorter; None for
    a compiled backend, a quick plan, or unknown byte counts.

    Parameters
    ----------
    scope:
        The verification's scope (``"full"`` or ``"small"``).
    timeout_s:
        Its time limit (s), said when the estimate exceeds it.
    what:
        What the verification is, for the sentence.
    scope_option:
        The command's way to verify at scope ``small`` (named with its
        estimate when that is much shorter), or None when it has none.
    always:
        Give the note whatever the estimate (for a refusal, which does not
        wait for :data:`WARN_S`).
    """
    if getattr(backend, "timing_meaningful", True):
        return None
    try:
        est = estimate(task, scope)
    except Exception:  # noqa: BLE001 - an estimate that cannot be made says nothing
        return None
    # the small-block figure too: an idle machine's typical 34 s said nothing before a BLOCK = 64 tanh's 176 s
    if est is None or (max(est["typical_s"], est["small_blocks_s"]) < WARN_S and not always):
        return None
    name = getattr(backend, "name", "the interpreter")
    text = (f"{name} runs every program of the kernel in Python (Triton's CPU interpreter), so its time follows "
            f"the number of programs (elements / BLOCK for an elementwise kernel): {what} runs "
            f"{est['tests']} tests, {CALLS_PER_TEST} kernel calls each, over about {est['megabytes']:.0f} MB of "
            f"inputs and outputs; an estimate (kstrata does not read the kernel): about "
            f"{_duration(est['typical_s'])} for a kernel with one program per row, {_duration(est['low_s'])} for an "
            f"elementwise one with 1024-element blocks, {_duration(est['small_blocks_s'])} for one with 64-element "
            f"blocks, up to {_duration(est['high_s'])} for one that loops over small tiles in each row"
            + (f", on this machine's load now ({est['busy']:.1f} times its CPUs by the {est['load_figure']}, the "
               "lowest of the 1- and 5-minute load averages and the tasks runnable now)"
               if est["busy"] > 1.2 else ""))
    if timeout_s and est["typical_s"] > timeout_s:
        text += f", more than the --timeout of {timeout_s:g} s (the verdict would then be `timeout`)"
    ways = []
    if scope != "small" and scope_option:
        small = estimate(task, "small")
        if small is not None and small["typical_s"] < 0.5 * est["typical_s"]:
            ways.append(f"{scope_option} (hidden tests at perturbed small shapes: about "
                        f"{_duration(small['typical_s'])})")
    from kstrata.tasks import scaled

    public = task.small_shapes[0] if task.small_shapes else task.nominal_shape
    smaller = smaller_shape(task, public) if public else None
    if smaller and smaller != public:
        sizes = ", ".join(f'"{k}": {v}' for k, v in smaller.items() if not k.startswith("@"))
        where = ("this task has no shapes metadata, so its test shapes were derived from its nominal one"
                 if scaled.applies(task) else "smaller sizes in its shapes metadata")
        ways.append(f"smaller test shapes in the task file ({where}): e.g. KSTRATA = {{\"shapes\": "
                    f"{{\"small\": [{{{sizes}}}], \"sweep\": [{{{sizes}}}]}}}} (README, \"Tasks\")")
    ways.append("the compiled backend (triton) on a GPU")
    return text + "; to make it shorter: " + "; or ".join(ways)
