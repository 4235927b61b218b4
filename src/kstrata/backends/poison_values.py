"""The values kstrata's poison patterns fill memory with, per dtype (no backend imported).

Patterns (:data:`PATTERNS`, :meth:`kstrata.backends.base.Backend.set_poison`): ``0`` off;
``1`` NaN for floating point, the dtype's maximum for integers, ``True`` for ``bool``;
``2`` a large finite value (``1e30``, or a quarter of the dtype's maximum where that is
smaller) for floating point, bytes ``0x55`` for integers, ``False`` for ``bool``. Used by
the TVM poison builds and plan runner (:mod:`kstrata.backends.tvm.poison`) and by the
Triton interpreter's masked loads without ``other`` (:mod:`kstrata.backends.triton.masked_other`).
"""

from __future__ import annotations

import math
from typing import Any

#: pattern number -> description
PATTERNS = {0: "off", 1: "NaN / integer max / True", 2: "1e30 (finite) / 0x55 bytes / False"}


def check_pattern(pattern: int) -> int:
    """``pattern`` as an int, if valid.

    Raises
    ------
    ValueError
        For a pattern other than 0, 1 or 2.
    """
    if pattern not in PATTERNS:
        raise ValueError(f"unknown poison pattern {pattern!r}; expected one of {sorted(PATTERNS)}")
    return int(pattern)


def _int_bits(bits: int, signed: bool) -> int:
    """The integer whose bytes are all ``0x55`` (a positive number either way)."""
    del signed
    return int.from_bytes(b"\x55" * (bits // 8), "little") if bits >= 8 else 1


def fill_value(dtype: str, pattern: int) -> Any:
    """The Python scalar a buffer of TVM dtype string ``dtype`` is filled with.

    Parameters
    ----------
    dtype:
        ``"float32"``, ``"int64"``, ``"bool"``, ``"uint8"``, ... (lanes suffix allowed).
    pattern:
        1 or 2 (see the module docstring).
    """
    base = dtype.split("x")[0]
    if base == "bool":
        return pattern == 1
    bits = int("".join(c for c in base if c.isdigit()) or 32)
    if base.startswith(("float", "bfloat")):
        if pattern == 1:
            return math.nan
        big = {16: 65504.0 if base == "float16" else 3.38e38, 32: 3.4e38, 64: 1.79e308}.get(bits, 3.4e38)
        return min(1e30, big / 4)
    if base.startswith("uint"):
        return (1 << bits) - 1 if pattern == 1 else _int_bits(bits, False)
    return (1 << (bits - 1)) - 1 if pattern == 1 else _int_bits(bits, True)
