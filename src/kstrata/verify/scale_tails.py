"""Scale-tail probes: hidden tests at the largest verified shape with its sizes moved onto odd values.

A kernel may take another path at a large size (a large-batch tiling, a split reduction, a grid-stride
loop) whose partial last tile is wrong. The sweeps' large sizes are powers of two or multiples of one
(fake_quant_per_token's nominal T = 8192), and their odd sizes are small (T = 17, 127), so a per-token
quantizer whose last partial 16-row tile shared one scale only where T >= 1024 read ``correct`` for
every secret (red-team rt80, case ``tests/verify/cases/rt80_quant_tail_share/tail_tile_at_scale.py``;
rt87). No perturbation reached the nominal shape: :func:`kstrata.verify.plan.perturbed_shapes` moves
sweep shapes only, and the octave probes stop at the sweep's largest size.

:func:`tail_shapes` takes, for each size variable, the shape the verification runs (base,
perturbed, the nominal one where it is verified) where that variable is largest, and :func:`tail_shape`
moves its size variables above 8 by at most :data:`kstrata.verify.plan.PERTURB_MAX` onto odd values (a
partial tile for every power-of-two tile width), the secret picking which; a variable that no listed
shape has at an odd value above 8 (a size the task constrains, such as a quantization group's multiple)
keeps its value. :func:`tail_tests` gives each probe a test per draw of
:func:`kstrata.verify.plan.large_draws` (the task's first and
:data:`kstrata.verify.plan.LARGE_SECOND_DRAW`), each with a secret seed of its own, or only the latter
where the shape is large (:data:`kstrata.verify.plan.LARGE_TEST_FLOPS`: a nominal shape on a CPU
already takes four calls), with the oracle :func:`kstrata.verify.plan.oracle_kind` allows. Whether the
reference runs there is checked by the caller.
"""

from __future__ import annotations

from kstrata.tasks.base import Task
from kstrata.verify.plan import (PERTURB_MAX, TestCase, _cost, _is_large, _key, _sizes, _tied, derive_int,
                                 large_draws, oracle_kind)


def _takes_odd(task: Task) -> set[str]:
    """The size variables that some listed shape (nominal, sweep, public) has at an odd value above 8."""
    shapes = [task.nominal_shape, *task.sweep_shapes, *task.small_shapes]
    return {n for sh in shapes for n, v in sh.items()
            if isinstance(v, int) and not isinstance(v, bool) and v > 8 and v % 2}


def tail_shape(task: Task, secret: str | bytes, shape: dict[str, int]) -> dict[str, int] | None:
    """``shape`` with each size variable above 8 that the task takes at odd values moved onto an odd
    value within :data:`kstrata.verify.plan.PERTURB_MAX` of it (never below 9; the secret picks which);
    tied variables (:func:`kstrata.verify.plan._tied`) move together where equal and keep their values
    where they differ. None when no variable moves (all kept, or already odd)."""
    sizes, odd, tied = _sizes(task), _takes_odd(task), _tied(task)
    out, moved = dict(shape), False
    for name, value in shape.items():
        group = tied.get(name, (name,))
        if (name not in sizes or name not in odd or not isinstance(value, int) or value <= 8 or value % 2
                or any(shape.get(g) != value for g in group) or out[name] != value):
            continue
        reach = [v for v in range(max(9, value - PERTURB_MAX), value + PERTURB_MAX + 1) if v % 2]
        pick = reach[derive_int(secret, f"{task.name}/scale-tail/{group[0]}") % len(reach)]
        for g in group:
            out[g] = pick
        moved = True
    return out if moved else None


#: Most scale-tail probes one verification adds (each is one call or two at a large shape).
SCALE_TAIL_PROBES = 2


def tail_shapes(task: Task, secret: str | bytes, run_shapes: list[dict[str, int]]) -> list[dict[str, int]]:
    """The probe shapes: for each size variable, the shape of ``run_shapes`` where it is largest (the
    costliest of those, by the task's formulas), moved by :func:`tail_shape`; at most
    :data:`SCALE_TAIL_PROBES`, those hosting the most variables' largest sizes first, then the costliest.
    A variable whose largest size is odd already has a tail there and hosts no probe. None of them is one
    of ``run_shapes``."""
    shapes = [task.full_shape(s) for s in run_shapes if s]
    hosts: list[tuple[int, float, dict[str, int]]] = []
    for name in sorted({n for sh in shapes for n, v in sh.items() if isinstance(v, int) and v > 8}):
        top = max(sh[name] for sh in shapes if isinstance(sh.get(name), int))
        if top % 2:
            continue
        host = max((sh for sh in shapes if sh.get(name) == top), key=lambda sh: _cost(task, sh))
        for i, (k, c, h) in enumerate(hosts):
            if h == host:
                hosts[i] = (k + 1, c, h)
                break
        else:
            hosts.append((1, _cost(task, host)[0] + _cost(task, host)[1], host))
    out: list[dict[str, int]] = []
    for _, _, host in sorted(hosts, key=lambda p: (-p[0], -p[1])):
        moved = tail_shape(task, secret, host)
        if moved is not None and moved not in shapes and moved not in out:
            out.append(moved)
    return out[:SCALE_TAIL_PROBES]


def tail_tests(task: Task, secret: str | bytes, run_shapes: list[dict[str, int]]) -> list[TestCase]:
    """The hidden tests at the shapes of :func:`tail_shapes`: at each, a test per draw of
    :func:`kstrata.verify.plan.large_draws` (the last only where the shape is large), one secret seed
    per draw, ``public=False``.

    Parameters
    ----------
    task:
        The task.
    secret:
        The per-run secret (the odd values and the input seeds derive from it).
    run_shapes:
        The shapes the verification runs (base, perturbed, and the nominal one where it is verified).

    Returns
    -------
    list[TestCase]
        The probes' tests, cheapest shape first. Whether the reference runs at them is the caller's to check.
    """
    param_seed = derive_int(secret, f"{task.name}/params")
    out = []
    for tail in sorted(tail_shapes(task, secret, run_shapes), key=lambda sh: _cost(task, sh)):
        # one call of a GPU-sized shape on a CPU: one test, of the draw made for scale
        dists = large_draws(task, tail)
        mine = dists[-1:] if _is_large(task, tail) else dists
        key = _key(tail)
        out += [TestCase(key, param_seed, derive_int(secret, f"{task.name}/scale-tail/seed/{key}/{j}"), d, False,
                         oracle_kind(task, tail), tuple(task.nominal_shape)) for j, d in enumerate(mine)]
    return out
