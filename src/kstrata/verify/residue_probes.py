"""Residue probes: hidden tests that make every size variable leave every
remainder modulo :data:`MODULUS` at least once.

A kernel that processes a row in vectors of 8 (or unrolls by 8) and mishandles
one particular tail length is wrong only at sizes with that remainder. The
sweep's sizes are mostly odd or powers of two, the perturbed shapes land on 2
mod 4 and 4 mod 8 (:data:`kstrata.verify.plan.PERTURB_RESIDUES`) and the
octave probes on multiples of 8, so remainders such as 3, 6 and 7 were reached
only by chance: a row dot product whose tail handler dropped the last element
when ``D % 8 == 7`` read ``correct`` for every secret (newcomer nc23).

For each remainder ``r`` in ``0..MODULUS-1`` that some size variable never
leaves at a size above 8 in the verification's shapes (base, perturbed,
public), one probe moves that variable, in the cheapest base shape where it is
above 8 and no size is 1, by at most :data:`kstrata.verify.plan.PERTURB_MAX` onto a size with
remainder ``r`` (so the probe stays inside the sizes
:func:`kstrata.verify.plan.size_bounds` tells an agent); the other variables
missing ``r`` that are above 8 there move with it. Where two sizes in reach
have remainder ``r``, the secret picks one, so the remainder modulo
``2 * MODULUS`` is not predictable either. One test per probe: the task's first
distribution and a secret seed, as the octave and size-1 probes
(:func:`kstrata.verify.plan.octave_tests`, :func:`kstrata.verify.plan.unit_tests`).
"""

from __future__ import annotations

from kstrata.tasks.base import Task
from kstrata.verify.plan import (TestCase, _cost, _key, _sizes, _tied, derive_int, oracle_kind, sizes_in_reach)

#: every size variable takes every remainder modulo this (the widest vector of 32-bit lanes in
#: 256 bits, and the common unroll factor) at a size above 8 somewhere in the verification
MODULUS = 8
#: most residue probes one verification adds (one per missing remainder, so at most MODULUS)
RESIDUE_PROBES = MODULUS


def _above_8(shape: dict[str, int], names: list[str]) -> int:
    """How many of ``names`` are above 8 in ``shape`` (a probe can move them)."""
    return sum(1 for n in names if isinstance(shape.get(n), int) and shape[n] > 8)


def _at_1(shape: dict[str, int], names) -> int:  # noqa: ANN001 - any collection of size names
    """How many of ``names`` are 1 in ``shape``."""
    return sum(1 for n in names if shape.get(n) == 1)


def residue_shapes(task: Task, secret: str | bytes, base: list[dict[str, int]],
                   known: list[dict[str, int]] | None = None) -> list[dict[str, int]]:
    """The probe shapes (no seeds): see the module docstring.

    Parameters
    ----------
    task:
        The task (its size variables: :func:`kstrata.verify.plan._sizes`; tied ones,
        :func:`kstrata.verify.plan._tied`, move together where equal).
    secret:
        The per-run secret (which of two sizes in reach a probe takes).
    base, known:
        The hidden base shapes and the other hidden shapes (perturbations); the
        task's public shapes count as covered too.

    Returns
    -------
    list[dict[str, int]]
        At most :data:`RESIDUE_PROBES` shapes, none of them in ``base``, ``known``
        or the public set. Shapes at which the reference does not run are
        dropped by the caller.
    """
    base = [b for b in base if b]
    if not base:
        return []
    shapes = [*base, *(known or []), *task.small_shapes]
    sizes = _sizes(task)
    names = sorted({n for b in base for n, v in b.items() if n in sizes and isinstance(v, int) and v > 8})
    covered = {n: {v % MODULUS for sh in shapes for v in [sh.get(n)] if isinstance(v, int) and v > 8}
               for n in names}
    tied = _tied(task)
    out: list[dict[str, int]] = []
    for r in range(MODULUS):
        missing = [n for n in names if r not in covered[n]]
        while missing:
            # the shape that moves most of the missing variables at once; of those, one with no size at 1 (a
            # probe of a single row compares one sum, where a dropped element may happen to be small: the
            # size-1 probes cover batches of one), the cheapest
            hosts = sorted((b for b in base if _above_8(b, missing)),
                           key=lambda b: (-_above_8(b, missing), _at_1(b, sizes), _cost(task, b)))
            if not hosts:
                break
            shape, moved = dict(hosts[0]), []
            for n in missing:
                group = tied.get(n, (n,))
                value = shape.get(n)
                if not isinstance(value, int) or value <= 8 or any(shape.get(g) != value for g in group):
                    continue  # not above 8 here, or tied sizes that differ (out_channels = 2 W): left as they are
                reach = sizes_in_reach(value, MODULUS, r)
                if not reach:
                    continue
                pick = reach[derive_int(secret, f"{task.name}/residue/{r}/{group[0]}") % len(reach)]
                for g in group:
                    shape[g] = pick
                moved += [g for g in group if g in covered]
            if not moved:
                break
            for n in moved:
                covered[n].add(r)
            missing = [n for n in missing if n not in moved]
            if shape not in shapes and shape not in out:
                out.append(shape)
    if len(out) > RESIDUE_PROBES:  # the secret picks which, as the octave probes do
        out = sorted(out, key=lambda sh: derive_int(secret, f"{task.name}/residue-order/{_key(sh)}"))
        out = out[:RESIDUE_PROBES]
    return out


def residue_tests(task: Task, secret: str | bytes, base: list[dict[str, int]],
                  known: list[dict[str, int]] | None = None) -> list[TestCase]:
    """One hidden test (the task's first distribution, a secret seed) at each
    shape of :func:`residue_shapes`, cheapest first, ``public=False``."""
    param_seed = derive_int(secret, f"{task.name}/params")
    first, order = task.meta.distributions[0], tuple(task.nominal_shape)
    return [TestCase(_key(sh), param_seed, derive_int(secret, f"{task.name}/residue/seed/{_key(sh)}"), first,
                     False, oracle_kind(task, sh), order)
            for sh in sorted(residue_shapes(task, secret, base, known), key=lambda sh: _cost(task, sh))]
