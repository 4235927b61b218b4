"""A feedback hint when the candidate computes the task's GELU with the other formula: the tanh
approximation where the task's reference uses the exact (erf) one, or the other way round
(newcomer nc24: ``F.gelu(x, approximate="tanh")`` for the task's erf GELU failed with max error
3.7e-4 on its draws (the two formulas differ by up to 4.7e-4, at ``|x|`` near 2.7), and no hint of the activation).

The judge runs the task's reference (trusted) once more on the failing test's inputs with every
``gelu`` call's ``approximate`` flipped (a :class:`torch.overrides.TorchFunctionMode`: ``F.gelu``
and ``nn.GELU`` alike) and compares the candidate's outputs with that; nothing is said where the
reference calls no ``gelu``."""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from kstrata.verify.layout_hint import close

#: ``approximate`` values of ``torch.nn.functional.gelu``: each one's other
OTHER = {"none": "tanh", "tanh": "none"}


class _FlipGelu(TorchFunctionMode):
    """Calls every ``gelu`` with the other ``approximate``; :attr:`seen` the reference's own value."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = dict(kwargs or {})
        if func is torch.nn.functional.gelu:
            args = tuple(args)
            own = kwargs.pop("approximate", args[1] if len(args) > 1 else "none")
            self.seen.add(str(own))
            kwargs["approximate"] = OTHER.get(own, own)
            args = args[:1]
        return func(*args, **kwargs)


def gelu_formula_hint(model: torch.nn.Module, inputs: list[Any], outputs: list[Any], device: Any = "cpu"
                      ) -> dict | None:
    """The ``approximation`` feedback item, or None.

    Parameters
    ----------
    model : the task's Model (the reference), on ``device``.
    inputs : the failing test's inputs (CPU), as the judge drew them.
    outputs : the candidate's outputs of that test (CPU tensors), in order.

    Said when the reference calls ``gelu`` with one ``approximate`` and the candidate's outputs
    equal (rtol 1e-4) the reference's with the other."""
    from kstrata.verify.feedback import item

    flip = _FlipGelu()
    try:
        with torch.no_grad(), flip:
            out = model(*[x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs])
    except Exception:  # noqa: BLE001 - a reference that does not run so: no reading
        return None
    if len(flip.seen) != 1:
        return None
    own = next(iter(flip.seen))
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    cands = [o for o in outputs if isinstance(o, torch.Tensor)]
    if not cands or len(cands) != len(outs) or not all(isinstance(r, torch.Tensor) and close(c, r, 1e-4)
                                                       for c, r in zip(cands, outs)):
        return None
    words = {"none": "the exact GELU (erf: x/2 (1 + erf(x / sqrt 2)), approximate='none')",
             "tanh": "GELU's tanh approximation (approximate='tanh')"}
    return item("approximation", "source",
                f"the output equals the reference's with {words.get(OTHER.get(own, own), own)} where the task "
                f"uses {words.get(own, own)}: the two differ by up to 4.7e-4 (at |x| near 2.7), beyond the "
                "tolerance; use the task's formula", task=own)
