"""Benchmark times drawn at random, for autotuners where nothing can time their configs.

An autotuner (``triton.autotune``, ``tilelang.autotune``) times each config on
its first call per tuning key and runs the fastest. Where its timer cannot
run (Triton's interpreter has no driver; TileLang's profiler times with CUDA
events on a CPU target) every autotuned kernel failed, and an honest candidate
read ``runtime_error`` or ``compile_error`` (red-team rt56). :func:`install`
replaces the timer by :func:`drawn`, which runs nothing and returns a random
time: the config a GPU would pick is unknown there, so each tuning key (a
shape) of each candidate process runs a config drawn from all of them, and
across the tests' shapes every config is verified (a bug in one config is
still found); a timed call times a drawn config, never one picked for being
fast on a noisy CPU.
"""

from __future__ import annotations

import random
from typing import Any

_DRAW = random.SystemRandom()


def drawn(*_args: Any, quantiles: Any = None, **_kwargs: Any) -> float | list[float]:
    """A random time in [0, 1) (unitless: only its order among configs matters), or that
    time once per quantile when ``quantiles`` is given, as ``do_bench`` returns them."""
    t = _DRAW.random()
    return [t] * len(quantiles) if quantiles else t


def _returns_drawn(self: Any) -> Any:
    return drawn


drawn._kstrata_drawn = True  # type: ignore[attr-defined]
_returns_drawn._kstrata_drawn = True  # type: ignore[attr-defined]


def install(owner: type, name: str, as_property: bool = False) -> bool:
    """Replace ``owner.name`` (a benchmark method, or with ``as_property`` a
    property returning a benchmark function) by :func:`drawn` (idempotent).
    Call before candidate code runs, in the process that loads it. Returns
    False when ``owner`` defines no ``name``."""
    current = owner.__dict__.get(name)
    if current is None:
        return False
    if not getattr(getattr(current, "fget", current), "_kstrata_drawn", False):
        setattr(owner, name, property(_returns_drawn) if as_property else drawn)
    return True
