"""A small or sweep shape that names a variable the nominal shape lacks is the
error reported (newcomer nc14: nominal {B, N} with small/sweep {B, D} was
reported as the flops formula's unknown D, with the whole metadata dict)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kstrata.tasks.meta import Shapes, TaskMeta


def test_a_shape_with_a_variable_nominal_lacks_is_refused_by_name():
    with pytest.raises(ValidationError, match=r"shapes.small\[0\] .* names \['D'\], which shapes.nominal"):
        TaskMeta.model_validate({"level": 1, "category": "norm", "flops": "3*B*D",
                                 "shapes": {"nominal": {"B": 64, "N": 128}, "small": [{"B": 4, "D": 32}]}})
    with pytest.raises(ValidationError, match=r"shapes.sweep\[1\]"):
        Shapes(nominal={"B": 8, "D": 16}, sweep=[{"B": 1}, {"X": 3}])


def test_a_shape_may_leave_variables_out():
    s = Shapes(nominal={"B": 8, "D": 16}, small=[{"D": 4}], sweep=[{"B": 1, "D": 3}])
    assert s.small == [{"D": 4}]
