"""A schedule step on a block name the PrimFunc does not have names the blocks
it has (queue round rt72: `sch.get_sblock("T_layer_norm")` after a graph change
whose PrimFunc's blocks are s_part, ..., y; the error named the missing one only)."""

from __future__ import annotations

import pytest

from kstrata.tasks.loader import resolve_task


def test_a_missing_block_name_lists_the_primfuncs_blocks():
    pytest.importorskip("tvm")
    from kstrata.backends.registry import get_backend
    from kstrata.backends.tvm.lower import lower_graph
    from kstrata.backends.tvm.schedule import ScheduleTextError, render_schedule, replay_schedule

    task = resolve_task("layernorm")
    funcs = lower_graph(task, get_backend("tvm-llvm").initial_sources(task)["graph"], {"B": 4, "D": 16}).funcs
    wrong = render_schedule({"layer_norm": ['i = sch.get_loops(sch.get_sblock("y"))[0]']})
    _, _, failed = replay_schedule(funcs, wrong)
    assert "Cannot find a block with the name: y" in failed[0].error
    assert "(the blocks of layer_norm here: x_sum, x_mean, x_var_sum, T_layer_norm)" in failed[0].error
    with pytest.raises(ScheduleTextError, match="the blocks of layer_norm here: x_sum"):
        replay_schedule(funcs, wrong, strict=True)
    # after an inlining step the list is the blocks left
    inlined = render_schedule({"layer_norm": ['sch.compute_inline(sch.get_sblock("x_mean"))',
                                              'sch.get_sblock("x_mean")']})
    _, _, failed = replay_schedule(funcs, inlined)
    assert "here: x_sum, x_var_sum, T_layer_norm)" in failed[0].error
    # other errors get no list
    _, _, failed = replay_schedule(funcs, render_schedule({"layer_norm": ["sch.parallel(None)"]}))
    assert failed and "the blocks of" not in failed[0].error
