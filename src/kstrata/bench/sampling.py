"""Stratified task samples: N tasks balanced over levels, then categories.

A benchmark of a few tasks per backend says little if they are all level-1
element-wise ops. :func:`stratified_sample` spreads the ``n`` picks over the
levels round-robin and, within a level, over its categories round-robin, so
the count per level (and per category within a level) differs by at most one
wherever the pool allows it. Which task of a category is taken is decided by
a seeded shuffle, so the same ``(tasks, n, seed)`` always gives the same
sample, and two backends sampled with one seed share as many tasks as their
supported sets allow.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def _level(task: Any) -> int:
    meta = getattr(task, "meta", None)
    return int(getattr(task, "level", None) or getattr(meta, "level", 1))


def _category(task: Any) -> str:
    meta = getattr(task, "meta", None)
    return str(getattr(task, "category", None) or getattr(meta, "category", "uncategorized"))


def stratified_sample(
    tasks: Sequence[T],
    n: int,
    seed: int = 0,
    *,
    level: Callable[[T], Any] = _level,
    category: Callable[[T], Any] = _category,
) -> list[T]:
    """Pick ``n`` of ``tasks`` balanced over levels, then over categories.

    Parameters
    ----------
    tasks:
        The pool (e.g. the suite tasks a backend supports); each needs a
        ``name`` attribute (the shuffle's tie-free sort key).
    n:
        How many to pick; ``n >= len(tasks)`` returns every task.
    seed:
        Seeds the shuffle inside each category (and the order categories are
        visited in), so samples are reproducible.
    level, category:
        Stratum keys of a task (default: ``task.level``/``task.meta.level``
        and ``task.category``/``task.meta.category``).

    Returns
    -------
    list
        The picked tasks in pick order (levels ascending, round-robin).

    Raises
    ------
    ValueError
        If ``n`` is negative.
    """
    if n < 0:
        raise ValueError(f"sample size must be >= 0, got {n}")
    strata: dict[Any, dict[Any, list[T]]] = {}
    for t in sorted(tasks, key=lambda t: t.name):
        strata.setdefault(level(t), {}).setdefault(category(t), []).append(t)
    rng = random.Random(f"kstrata-sample:{seed}")
    # per level: a cycle over its categories (visited in a seeded order),
    # each category a seeded queue of tasks
    queues: dict[Any, list[list[T]]] = {}
    for lv in sorted(strata):
        cats = sorted(strata[lv], key=str)
        rng.shuffle(cats)
        queues[lv] = []
        for c in cats:
            items = list(strata[lv][c])
            rng.shuffle(items)
            queues[lv].append(items)
    cursor = {lv: 0 for lv in queues}
    out: list[T] = []
    while len(out) < n and any(any(q) for q in queues.values()):
        for lv in sorted(queues):
            if len(out) >= n:
                break
            cats = queues[lv]
            for _ in range(len(cats)):
                q = cats[cursor[lv] % len(cats)]
                cursor[lv] += 1
                if q:
                    out.append(q.pop(0))
                    break
    return out
