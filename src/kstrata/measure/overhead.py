"""Timings dominated by per-call overhead, not by a kernel (issue #17 item 7).

A call that does almost no work (case 05_tiny_tensor_timing: four elementwise
ops on a 4 x 16 tensor, ~200 FLOP) is timed as Python dispatch, module
``__call__`` hooks and kernel-launch latency. A candidate that only removes
those (calls ``torch.tanh`` instead of going through ``nn.Sequential``) shows
a "speedup" no kernel earned. :func:`overhead_notes` marks such timings and
:func:`counts_as_win` keeps them out of the win counts.

Constants and where they come from
----------------------------------
:data:`MIN_FLOPS`, :data:`MIN_BYTES`
    1 MFLOP and 64 KiB per call. One eager PyTorch op costs ~2-10 us of
    dispatch on a current x86 CPU and ~5 us of launch on a GPU (PyTorch's
    own "performance tuning guide" and the CUDA launch latency measured by
    ``triton.testing.do_bench`` on an empty kernel); a 2-core CPU does ~1
    MFLOP or streams ~64 KiB from L2 in about that time, so below both the
    work is no larger than the overhead it is wrapped in.
:data:`CPU_MIN_MEDIAN_MS`, :data:`GPU_MIN_MEDIAN_MS`
    20 us on CPU (a handful of eager op dispatches), 10 us on GPU (two kernel
    launches plus the device synchronize of the CUDA timer, see
    :mod:`kstrata.measure.timing`): a median below this is mostly fixed cost.
:data:`EMPTY_MARGIN_MS`
    5 us: both medians within this of the measured cost of an empty module
    call (:func:`empty_call_ms`) means all that differs between them is
    Python/launch overhead.
:data:`SMALL_WORK_MS`, :data:`OVER_FLOOR`
    A call whose work takes under 50 us at the roofline (a handful of op
    dispatches, the floors above) and whose candidate and baseline both take
    more than 20x that (under 5% of the roofline) is timed as overhead, not
    as work, whatever its FLOP count: red-team rt61, 16 Linear+ReLU layers
    on a batch of 8 (1.05 MFLOP, just over :data:`MIN_FLOPS`), called
    without the module wrappers, read 1.84x [1.30, 2.68] faster at ~100x its
    roofline floor.
"""

from __future__ import annotations

import time
from typing import Any

import torch

MIN_FLOPS = 1e6
MIN_BYTES = 64 * 1024
CPU_MIN_MEDIAN_MS = 0.020
GPU_MIN_MEDIAN_MS = 0.010
EMPTY_MARGIN_MS = 0.005
SMALL_WORK_MS = 0.05
OVER_FLOOR = 20.0
#: Every note of :func:`overhead_notes` starts with this, so it can be found
#: again among a measurement's ``suspicious`` reasons.
PREFIX = "overhead-dominated:"

_EMPTY_CACHE: dict[str, float] = {}


class _Empty(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def empty_call_ms(device: str = "cpu", reps: int = 2000) -> float:
    """Median wall-clock cost (ms) of calling an ``nn.Module`` whose forward
    returns its input, on ``device`` (synchronized on CUDA); measured once per
    device and process, then cached.

    Parameters
    ----------
    device:
        ``"cpu"`` or a CUDA device string.
    reps:
        Calls timed (after 100 warm-up calls).
    """
    key = str(device)
    if key in _EMPTY_CACHE:
        return _EMPTY_CACHE[key]
    m, x = _Empty(), torch.zeros(1, device=device)
    cuda = key.startswith("cuda")
    samples = []
    for i in range(reps + 100):
        t0 = time.perf_counter_ns()
        m(x)
        if cuda:
            torch.cuda.synchronize()
        if i >= 100:
            samples.append((time.perf_counter_ns() - t0) / 1e6)
    samples.sort()
    _EMPTY_CACHE[key] = samples[len(samples) // 2]
    return _EMPTY_CACHE[key]


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _medians(measurement: Any) -> tuple[float | None, float | None]:
    cand, base = _get(measurement, "candidate"), _get(measurement, "baseline")
    return (None if cand is None else _get(cand, "median"), None if base is None else _get(base, "median"))


def overhead_notes(measurement: Any, flops: float | None, nbytes: float | None, device: str,
                   empty_ms: float | None = None, floor_ms: float | None = None) -> list[str]:
    """Reasons a timing measures per-call overhead rather than a kernel.

    Parameters
    ----------
    measurement:
        A :class:`kstrata.measure.timing.Measurement` or its ``to_dict()``
        (medians in ms).
    flops, nbytes:
        FLOPs and minimum bytes of one call at the timed shape (the task's
        formulas; ``None`` when unknown: that criterion is skipped).
    device:
        Where it was timed: ``"cpu"`` or ``"cuda..."`` (a measurement's
        ``device`` text such as ``"cpu: AMD EPYC"`` also works).
    empty_ms:
        The measured cost of an empty module call on that device
        (:func:`empty_call_ms`); ``None`` skips the third criterion (it is
        never measured here, so the judge decides where it is timed).
    floor_ms:
        The roofline floor of one call at the timed shape (ms,
        :func:`kstrata.measure.roofline.floor_ms`); ``None`` skips the fourth.

    Returns
    -------
    list[str]
        Empty when the timing is meaningful; else one note per criterion met,
        each starting with :data:`PREFIX`:

        * work floor: ``flops < MIN_FLOPS`` and ``nbytes < MIN_BYTES``;
        * time floor: the larger median (candidate or baseline) is below
          :data:`CPU_MIN_MEDIAN_MS` (CPU) / :data:`GPU_MIN_MEDIAN_MS` (GPU);
        * overhead only: both medians within :data:`EMPTY_MARGIN_MS` of
          ``empty_ms`` (the speedup is removed launch/Python overhead);
        * far over a small floor: ``floor_ms`` under :data:`SMALL_WORK_MS`
          and both medians over :data:`OVER_FLOOR` times it.
    """
    notes = []
    if flops is not None and nbytes is not None and flops < MIN_FLOPS and nbytes < MIN_BYTES:
        notes.append(f"{PREFIX} one call does {flops:.3g} FLOP and moves {nbytes:.3g} bytes, below "
                     f"{MIN_FLOPS:.0e} FLOP and {MIN_BYTES // 1024} KiB: the time is per-call overhead")
    cand, base = _medians(measurement)
    known = [x for x in (cand, base) if x is not None]
    gpu = str(device).startswith("cuda")
    floor = GPU_MIN_MEDIAN_MS if gpu else CPU_MIN_MEDIAN_MS
    if known and max(known) < floor:
        notes.append(f"{PREFIX} medians {', '.join(f'{x * 1e3:.3g} us' for x in known)} are below "
                     f"{floor * 1e3:.3g} us on {'GPU' if gpu else 'CPU'}: launch/dispatch cost dominates")
    if empty_ms is not None and cand is not None and base is not None and \
            max(cand, base) - empty_ms <= EMPTY_MARGIN_MS:
        notes.append(f"{PREFIX} both medians are within {EMPTY_MARGIN_MS * 1e3:.3g} us of an empty "
                     f"module call ({empty_ms * 1e3:.3g} us): the speedup is removed call overhead")
    if floor_ms is not None and 0 < floor_ms < SMALL_WORK_MS and len(known) == 2 and \
            min(known) > OVER_FLOOR * floor_ms:
        notes.append(f"{PREFIX} one call's work takes {floor_ms * 1e3:.3g} us at the roofline and both medians "
                     f"({', '.join(f'{x * 1e3:.3g} us' for x in known)}) are over {OVER_FLOOR:g}x that: the time "
                     "is per-call overhead (dispatch, module calls, thread-pool handoffs), not work")
    return notes


def counts_as_win(measurement: Any, notes: list[str] | None = None) -> bool:
    """Whether a timing may count as a speedup over its baseline: it has a
    speedup whose interval's lower bound is above 1.0
    (:func:`kstrata.bench.metrics.faster_than`) and no overhead note.

    Parameters
    ----------
    measurement:
        A ``Measurement`` or its dict; ``speedup`` holds ``point``/``low``.
    notes:
        The :func:`overhead_notes` of it; by default the notes already stored
        in its ``suspicious`` list (those starting with :data:`PREFIX`).
    """
    from kstrata.bench.metrics import faster_than

    if notes is None:
        notes = [n for n in (_get(measurement, "suspicious") or []) if str(n).startswith(PREFIX)]
    s = _get(measurement, "speedup")
    if s is None or notes:
        return False
    return faster_than(_get(s, "point"), _get(s, "low"), 1.0)
