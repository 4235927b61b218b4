"""Masked-out lanes of a Triton load without ``other`` get the judge's poison in the interpreter.

``tl.load(ptrs, mask=m)`` with no ``other`` leaves the lanes where ``m`` is false
undefined on a GPU (Triton's ``tl.load`` documentation: "if mask[idx] is false and
other is None, the value is undefined"; the GPU lowering emits no move into those
registers; the same for a block pointer's ``padding_option=""``). Triton's CPU
interpreter fills them with zeros (``InterpreterBuilder.create_masked_load``), so a
row sum that loaded its last partial block without ``other`` and added every lane
read correct on ``triton-interp`` while on a GPU it adds whatever the registers held
(flagos-ai/FlagGems#3716; red-team rt86, case ``rt86_masked_load_no_other``).

Under the judge's poison patterns (:meth:`kstrata.backends.base.Backend.set_poison`;
each test's two checked calls run under patterns 1 and 2) those lanes hold the
pattern's value instead (NaN / integer max, then 1e30 or a quarter of the dtype's
maximum / bytes ``0x55``; :func:`kstrata.backends.poison_values.fill_value`), so an
output that depends on them differs between the two calls or from the oracle.
Pattern 0 (off: timed calls and the timing's checked calls) keeps the interpreter's
zeros. A kernel that uses the lanes only under its mask (``tl.where(m, x, 0)``, a
masked store) is unaffected.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kstrata.backends.poison_values import check_pattern, fill_value

#: the pattern masked-out lanes of a load without ``other`` get (0: the interpreter's zeros)
_PATTERN = [0]


def set_pattern(pattern: int) -> None:
    """Poison the masked-out lanes of later loads without ``other`` with ``pattern`` (0, 1 or 2).

    Raises
    ------
    ValueError
        For a pattern other than 0, 1 or 2.
    """
    _PATTERN[0] = check_pattern(pattern)


def poisoned_other(ptrs: Any, other: Any) -> Any:
    """The ``other`` operand a masked load of interpreter pointer handle ``ptrs`` runs with:
    ``other`` itself when given or when poisoning is off, else an interpreter ``TensorHandle``
    of ``ptrs``' shape holding the pattern's value in the loaded element type (a bool load
    gets the pattern's bool, a bfloat16 one, stored as uint16 bits there, its integer pattern)."""
    if other is not None or not _PATTERN[0]:
        return other
    from triton.runtime.interpreter import TensorHandle, _get_np_dtype

    dtype_tt = ptrs.get_element_ty()
    dtype_np = np.dtype(_get_np_dtype(dtype_tt))
    value = fill_value(dtype_np.name, _PATTERN[0])
    return TensorHandle(np.full(np.shape(ptrs.data), value, dtype=dtype_np), dtype_tt)
