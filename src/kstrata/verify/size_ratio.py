"""Name a constant output ratio that is a ratio of the test's own sizes.

A kernel that counts a row of ``n`` elements as ``m`` (its padded length, a
block multiple, one more or one less) scales its outputs by ``n / m`` (a mean
that divides by the padded count), by ``m / n``, or by the square root of
either (a mean of squares under ``rsqrt``, as in RMSNorm or a standard
deviation). Queue round rt78: an RMSNorm dividing its sum of squares by D
rounded up to 16 read "output = 1.01929 x expected everywhere", and nothing
said that 1.01929 = sqrt(80/77) at D = 77.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

#: the block sizes a padded count is rounded up to
BLOCKS = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: relative distance within which a measured ratio matches a size ratio (a float32 output's
#: ratio is good to ~1e-6; (n - 1)/n and n/(n + 1) differ by 1/n^2, 3.8e-6 at n = 512, so the closest is named)
MATCH_REL = 3e-5


def _padded(n: int) -> list[tuple[int, str]]:
    """Counts ``m != n`` a kernel might take for a size ``n``, each with how it comes from ``n``."""
    out: dict[int, str] = {}
    for b in reversed(BLOCKS):  # the largest block that gives m names it
        m = -(-n // b) * b
        if m != n and m not in out:
            out[m] = f"{n} rounded up to a multiple of {b}"
        m = n // b * b
        if 0 < m != n and m not in out:
            out[m] = f"{n} rounded down to a multiple of {b}"
    p = 1 << max(n - 1, 0).bit_length()
    if p != n:
        out.setdefault(p, f"{n} rounded up to a power of two")
    for m, how in ((n + 1, f"{n} + 1"), (n - 1, f"{n} - 1")):
        if m > 0:
            out.setdefault(m, how)
    return list(out.items())


def size_ratio_hint(r: float, sizes: Iterable[int]) -> str:
    """`` (r^2 = 80/77 ...)`` when ``r`` (the candidate's output over the
    expected, one value everywhere), its square, or their inverses equal
    ``m / n`` for a size ``n`` among ``sizes`` (the dimensions of the test's
    inputs and output, each > 1) and a count ``m`` a kernel might take for it
    (``n`` rounded up or down to a block of :data:`BLOCKS`, up to a power of
    two, ``n +- 1``) or another size among ``sizes`` (queue round rt82: an
    RMSNorm's IR dividing by the row count, r^2 = 5/77), within
    :data:`MATCH_REL`; ``""`` when none does, and for a count whose ratio to
    its size is a whole number or its inverse (2, 1/8: an extra or missing
    factor is likelier, and the caller's ``r^2 = 64`` hint names those; rt82:
    r = 1/8 at B=8, D=512 read "64 is 8 rounded up to a multiple of 64").
    Two sizes are tried first, then each size's counts, the closest match
    named (on a tie: smallest size first, the form ``r`` before ``r^2``)."""
    if not (r > 0 and math.isfinite(r)):
        return ""
    ns = sorted({int(s) for s in sizes if int(s) > 1})
    for form, value in (("r", r), ("r^2", r * r)):  # two sizes of the test, one for the other (rt82)
        for a, b in ((a, b) for a in ns for b in ns if a != b):
            if abs(value - a / b) <= MATCH_REL * (a / b):
                root = "" if form == "r" else "under a square root (a mean of squares, a variance), "
                return (f" ({form} = {a}/{b} = {a / b:.6g}: {a} and {b} are both sizes of this test: {root}one "
                        "used where the other belongs? e.g. a row count in place of a row length)")
    best: tuple[float, int, str, int, int, int, str] | None = None  # the closest count (rt89: at n = 512,
    for n in ns:  # 511/512 and 512/513 lie 3.8e-6 apart, within MATCH_REL: the first found named n + 1)
        for form, value in (("r", r), ("r^2", r * r)):
            for m, how in _padded(n):
                for a, b in ((m, n), (n, m)):
                    off = abs(value - a / b) / (a / b)
                    if a % b and b % a and off <= MATCH_REL and (best is None or off < best[0]):
                        best = (off, n, form, m, a, b, how)
    if best is not None:
        _, n, form, m, a, b, how = best
        root = "" if form == "r" else "under a square root (a mean of squares, a variance), "
        eg = ("a variance divided by n - 1 (unbiased, torch.var's default) where the reference's "
              "divides by n (biased), or the reverse" if abs(m - n) == 1 and form == "r^2" else
              "a sum divided by a padded or block-rounded length, or padded lanes counted")
        return (f" ({form} = {a}/{b} = {a / b:.6g}: {n} is a size of this test and {m} is {how}: "
                f"{root}a count of {m} where {n} belongs, or the reverse? e.g. {eg})")
    return ""
