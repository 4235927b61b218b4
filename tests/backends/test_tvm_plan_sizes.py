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
