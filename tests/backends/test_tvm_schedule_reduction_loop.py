"""A schedule step that vectorizes a reduction loop says so and how to vectorize
a sum (queue round rt75: `sch.vectorize` of the inner split of layer_norm's
`lv_sum` loop read only "block s_tir.SBlock#0 ... is not a data parallel block
iter")."""

from __future__ import annotations

import pytest

from kstrata.tasks.loader import resolve_task


def test_vectorizing_a_reduction_loop_names_it_and_rfactor():
    pytest.importorskip("tvm")
    from kstrata.backends.registry import get_backend
    from kstrata.backends.tvm.lower import lower_graph
    from kstrata.backends.tvm.schedule import ScheduleTextError, render_schedule, replay_schedule

    task = resolve_task("layernorm")
    funcs = lower_graph(task, get_backend("tvm-llvm").initial_sources(task)["graph"], {"B": 4, "D": 32}).funcs
    wrong = render_schedule({"layer_norm": ['i, k = sch.get_loops(sch.get_sblock("x_sum"))',
                                            "ko, ki = sch.split(k, factors=[None, 16])",
                                            "sch.vectorize(ki)"]})
    _, _, failed = replay_schedule(funcs, wrong)
    assert "not a data parallel block iter" in failed[0].error
    assert "that loop is a reduction loop of the block" in failed[0].error and "sch.rfactor" in failed[0].error
    with pytest.raises(ScheduleTextError, match="reduction loop of the block"):
        replay_schedule(funcs, wrong, strict=True)
    # a spatial loop vectorizes; other errors get no such note
    ok = render_schedule({"layer_norm": ['i, j = sch.get_loops(sch.get_sblock("T_layer_norm"))',
                                         "sch.vectorize(j)"]})
    assert not replay_schedule(funcs, ok)[2]
    _, _, failed = replay_schedule(funcs, render_schedule({"layer_norm": ["sch.parallel(None)"]}))
    assert failed and "reduction loop" not in failed[0].error
