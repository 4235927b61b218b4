"""Benchmark times drawn at random, for autotuners where nothing can time their configs.

An autotuner (``triton.autotune``, ``tilelang.autotune``) times each config on
its first call per tuning key and runs the fastest. Where its timer cannot
run (Triton's interpreter has no driver; TileLang's profiler times with CUDA
events on a CPU target) every autotuned kernel failed, and an honest candidate
read ``runtime_error`` or ``compile_error`` (red-team rt56). :func:`install`
replaces the timer by :func:`drawn`, which runs nothing and returns a random
time: the config a GPU would pick is unknown there, so each tuning key (a
shape) of each candidate process runs a config drawn from all of them (a
bug in one config is found where a shape draws it); a timed call times a
drawn config, never one picked for being fast on a noisy CPU. Where the
autotuner marks its tuning rounds (Triton's ``prune_configs``),
:func:`install_covering` gives the configs in turn instead, so that ``n``
shapes run all ``n`` configs.
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


def install_covering(owner: type, bench: str = "do_bench", rounds: str = "prune_configs") -> bool:
    """Like :func:`install` with ``as_property``, for an autotuner whose
    ``rounds`` method starts each tuning round (Triton's ``prune_configs``,
    called once per new tuning key before its configs are timed in order):
    the configs are not drawn independently per key but in turn, the k-th
    key of an autotuner getting config ``(offset + k) mod n`` with ``offset``
    drawn once per autotuner (idempotent). Drawn independently, a config
    could be missed by every shape of a verification (4 configs and 10
    shapes: 5.6%), and a kernel wrong in that config only, the one a GPU may
    pick, read correct; in turn, ``n`` shapes run each config once, in an
    order the candidate cannot know. Returns False when ``owner`` lacks either method."""
    current, start = owner.__dict__.get(bench), owner.__dict__.get(rounds)
    if current is None or start is None:
        return False
    if getattr(getattr(current, "fget", current), "_kstrata_drawn", False):
        return True

    def new_round(self: Any, *args: Any, **kwargs: Any) -> Any:
        configs = start(self, *args, **kwargs)
        state = self.__dict__.setdefault("_kstrata_turns", {"offset": _DRAW.randrange(1 << 30), "round": 0})
        state["pick"] = (state["offset"] + state["round"]) % max(1, len(configs))
        state["round"], state["call"] = state["round"] + 1, 0
        return configs

    def benchmark_of(self: Any) -> Any:
        def timed(*_args: Any, quantiles: Any = None, **_kwargs: Any) -> float | list[float]:
            state = self.__dict__.get("_kstrata_turns")
            if state is None or "pick" not in state:  # timed outside a tuning round: a drawn time
                return drawn(quantiles=quantiles)
            i, state["call"] = state["call"], state["call"] + 1
            t = 0.0 if i == state["pick"] else 1.0 + i  # the round's pick is the fastest
            return [t] * len(quantiles) if quantiles else t
        return timed

    benchmark_of._kstrata_drawn = True  # type: ignore[attr-defined]
    setattr(owner, rounds, new_round)
    setattr(owner, bench, property(benchmark_of))
    return True

