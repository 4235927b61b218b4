"""What the TVM schedule sheet says about the sizes of the TensorIR shown
matches what the prompt shows (queue round rt56: the sheet said a
hand-written PrimFunc "is shown with its size variables (here `n`, `d`)", but
the layernorm_rows graph's PrimFunc was shown at B = D = 4096, its chunk loop
as `T.grid(T.int64(256), T.int64(16))`)."""

from __future__ import annotations

import tomllib

import pytest

from kstrata.agents.prompt import api_sheet
from kstrata.tasks.loader import resolve_task

pytest.importorskip("tvm")


def test_the_sheet_says_how_a_hand_written_primfunc_is_shown():
    from kstrata.backends.tvm.lower import lower_graph
    from kstrata.agents.exemplars import __file__ as exemplars_init
    from pathlib import Path

    graph = tomllib.loads((Path(exemplars_init).parent / "layernorm_rows_tvm.toml").read_text())["code"]
    task = resolve_task("layernorm")
    lowered = lower_graph(task, graph, task.full_shape(task.nominal_shape))  # what the prompt shows
    script = lowered.funcs["layer_norm_rows"].script()
    sheet = api_sheet("tvm-llvm", "schedule")
    shown_symbolic = "T.int64()" in script
    assert not shown_symbolic and "T.int64(256)" in script, script[:600]
    assert "shown with its size variables" not in sheet
    assert "appear as the nominal sizes" in sheet
