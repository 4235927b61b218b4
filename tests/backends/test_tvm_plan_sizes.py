"""A symbolic TVM build called with inputs that disagree on a size names the
inputs and axes, not the graph's symbol (newcomer nc15: an export called at the
wrong D raised "inputs disagree on size s27: 333 vs 1024")."""

from __future__ import annotations

import pytest

from kstrata.backends.tvm.lower import Plan


def test_a_size_mismatch_names_the_inputs_and_axes():
    plan = Plan(inputs=["x", "p_scale"], outputs=[], single=True,
                syms=[[0, 0, "s77"], [0, 1, "s27"], [1, 0, "s27"]])
    with pytest.raises(ValueError) as e:
        plan.resolve([(4, 333), (1024,)])
    msg = str(e.value)
    assert "input x (argument 0) axis 1 is 333 but parameter scale (argument 1) axis 0 is 1024" in msg
    assert "s27" not in msg
    buffers, _, _ = plan.resolve([(4, 1024), (1024,)])  # agreeing shapes resolve
    assert buffers == {}


def test_an_export_names_the_task_variable_of_each_size():
    """``kstrata export`` maps the graph's symbols to the task's size variables
    (a meta-device draw at distinct sizes), so the message names D."""
    import json

    import kstrata
    from kstrata.cli.export import _with_size_names

    task = kstrata.load_task("rmsnorm")
    plan = Plan(inputs=["x", "p_weight"], outputs=[], single=True,
                syms=[[0, 0, "s77"], [0, 1, "s27"], [1, 0, "s27"]])
    named = Plan.from_json(_with_size_names(plan.to_json(), task, {"B": 1024, "D": 1024}))
    assert named.names == {"s77": "B", "s27": "D"}
    with pytest.raises(ValueError, match=r"axis 1 is 333 but parameter weight \(argument 1\) axis 0 is 1024; "
                                         r"the compiled graph takes one size for both \(the task's D\)"):
        named.resolve([(4, 333), (1024,)])
    assert "names" not in json.loads(plan.to_json())  # a plan without names is written as before (source headers)
