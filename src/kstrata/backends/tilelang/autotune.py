"""``tilelang.autotune`` on a target without a GPU (``tilelang-c``).

TileLang's autotuner compiles each config, then times it with
``Profiler.do_bench``, whose default timer is CUDA events: on the C target
every config failed ("No device is available") and the autotuner raised
"No configuration successfully compiled and passed benchmarking/validation",
so an honest autotuned kernel read ``compile_error`` (red-team rt56).
:func:`draw_configs` makes the profiler return a random time without running
anything (:mod:`kstrata.backends.drawn_bench`). The autotuner's progress bars
started tqdm's monitor thread, which outlives the call (``no_threads_left``):
it is switched off (``tqdm.tqdm.monitor_interval = 0``, tqdm's own knob).
"""

from __future__ import annotations

from kstrata.backends import drawn_bench


def draw_configs() -> bool:
    """Make TileLang's ``Profiler.do_bench`` return a random time without
    running anything, and switch tqdm's monitor thread off (idempotent). Call
    before candidate code runs, in the process that loads it, for a target
    without a GPU only: a candidate's own profiler calls get the same draws.
    Returns False when this TileLang has no profiler to patch."""
    try:
        from tilelang.profiler import Profiler
    except ImportError:
        return False
    try:
        import tqdm

        tqdm.tqdm.monitor_interval = 0
    except ImportError:
        pass
    return drawn_bench.install(Profiler, "do_bench")
