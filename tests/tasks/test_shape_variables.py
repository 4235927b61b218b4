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


def test_a_size_written_as_a_shift_is_a_size_variable():
    """Newcomer nc17: ``N = 1 << 20`` was no size variable (its shapes read ``@1048576=...`` and the nominal
    shape ``{}``)."""
    from kstrata.tasks.base import int_globals
    from kstrata.tasks.formula import FormulaError, eval_formula

    assert int_globals("N = 1 << 20\nM = N >> 2\n") == {"N": 1 << 20, "M": 1 << 18}
    assert eval_formula("B << 1", {"B": 4.0}) == 8
    with pytest.raises(FormulaError, match="whole numbers"):
        eval_formula("B << 1", {"B": 4.5})


def test_a_literal_sized_tasks_nominal_shape_is_named_in_words(tmp_path):
    from kstrata.tasks.loader import load_task
    from kstrata.verify.plan import nominal_words

    p = tmp_path / "lit.py"
    p.write_text("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
                 "        return x * 2\n\n\ndef get_inputs():\n    return [torch.randn(64, 512)]\n\n\n"
                 "def get_init_inputs():\n    return []\n")
    assert nominal_words(load_task(p)) == "the nominal shape (get_inputs()'s own sizes)"


def test_a_formula_naming_a_global_outside_the_nominal_shape_says_what_to_add(tmp_path):
    """Newcomer nc28: 'flops formula 'B*D' uses ['D'], which are not shape variables
    (known: ['B', 'Q']) (got {... 'category': 'elementwise', 'tags': [...]})': D is a
    module global, and the echoed dict held keys the user never wrote."""
    from kstrata.tasks.base import TaskError
    from kstrata.tasks.loader import load_task

    path = tmp_path / "t_meta.py"
    path.write_text('import torch\nB, D = 64, 32\nKSTRATA = {"shapes": {"nominal": {"B": 64, "Q": 3}}, '
                    '"flops": "B*D"}\nclass Model(torch.nn.Module):\n    def forward(self, x): return x\n'
                    'def get_inputs(): return [torch.randn(B, D)]\ndef get_init_inputs(): return []\n')
    with pytest.raises(TaskError) as e:
        load_task(path)
    said = str(e.value)
    assert "uses D, which shapes.nominal does not name (it names B, Q)" in said and "add D there" in said
    assert "category" not in said and "got {" not in said
