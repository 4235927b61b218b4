"""The baselines a candidate can be timed against (``--baselines``), in a
module that imports no torch: the CLI checks the option before the task and
backend load."""

from __future__ import annotations

from collections.abc import Sequence

KINDS = ("eager", "compile", "metaschedule")


def kinds_for(backend: str) -> tuple[str, ...]:
    """Baselines that apply to ``backend``: eager and compile always, plus
    MetaSchedule for ``tvm-*`` backends."""
    return KINDS if backend.startswith("tvm") else KINDS[:2]


def check_baselines(names: Sequence[str], backend: str) -> tuple[str, ...]:
    """``names`` (``--baselines``, split at commas) checked against
    :func:`kstrata.measure.baselines.kinds_for` ``backend``: each known, each
    once, at least one.

    Raises
    ------
    ValueError
        Naming the unknown (or, for a non-``tvm-*`` backend, inapplicable)
        baselines and the ones to choose from (newcomer nc16: ``--baselines
        eager,foo`` dropped foo silently and ``--baselines foo`` started a run).
    """
    known = kinds_for(backend)
    wrong = [n for n in names if n not in known]
    if wrong:
        where = "" if all(n not in KINDS for n in wrong) else f" on {backend} (metaschedule is for tvm-* backends)"
        raise ValueError(f"unknown --baselines {', '.join(map(repr, wrong))}{where}; choose from "
                         f"{', '.join(known)} (comma-separated, the first is the one searched on)")
    if not names:
        raise ValueError(f"--baselines is empty; name one or more of {', '.join(known)}")
    if len(set(names)) != len(names):
        raise ValueError(f"--baselines names one twice ({', '.join(names)}); name each once")
    return tuple(names)
