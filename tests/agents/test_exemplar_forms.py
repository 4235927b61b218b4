"""What prompts show a model to copy: the layernorm exemplar is the faster
two-level form (separate blocks in the graph, scheduled at the schedule
level: m22 measured 0.38-0.47 ms against 0.58-0.84 ms for the one-block form
it replaces), and a graph's size variables are bounded below by 1, as the
hidden tests' sizes are (m22: the exported graphs said D >= 77, K >= 2)."""

from __future__ import annotations

import json
import re

from kstrata.agents.exemplars import all_exemplars, exemplars_for

BOUNDS = re.compile(r'"tir_var_lower_bound":\s*(\{[^{}]*\})')


def test_the_layernorm_exemplar_leaves_its_loops_to_the_schedule_it_comes_with():
    from kstrata.backends.registry import get_backend
    from kstrata.backends.tvm.lower import lower_graph
    from kstrata.backends.tvm.schedule import replay_schedule
    from kstrata.backends.tvm.structure import graph_structure
    from kstrata.tasks.loader import resolve_task

    ex = next(e for e in all_exemplars() if e.name == "layernorm_rows_tvm")
    assert ex.schedule and "def schedule_layer_norm_rows(sch)" in ex.schedule
    # the graph writes no loop schedule: its loops are plain, each pass its own block
    assert "T.parallel" not in ex.code and "T.vectorized" not in ex.code
    task = resolve_task("layernorm")
    sources = ex.check_sources(get_backend("tvm-llvm").initial_sources(task))
    assert sources["graph"].strip() == ex.code.strip() and sources["schedule"].strip() == ex.schedule.strip()
    lowered = lower_graph(task, sources["graph"], task.full_shape({"B": 8, "D": 77}))
    structure = graph_structure(lowered.funcs)
    assert structure["layer_norm_rows"]["blocks"] > 1 and structure["layer_norm_rows"]["open_loops"] > 0
    replay_schedule(lowered.funcs, sources["schedule"], strict=True)  # every step names what exists
    # the prompt shows the schedule with the graph
    from kstrata.agents.prompt import environment

    text = environment().get_template("hierarchical_knowledge.j2").render(
        rebuild=None, exemplars=exemplars_for("norm", "tvm-llvm", "graph"), skills=[], category="norm",
        level="graph", flat=False, backend="tvm-llvm", other_roles=["schedule"])
    assert "Its schedule (the schedule level's part" in text and "sch.annotate(c, \"pragma_loop_partition_hint\"" \
        in text


def test_every_graph_shown_bounds_its_sizes_below_by_1():
    for e in all_exemplars():
        for m in BOUNDS.finditer(e.code):
            assert set(json.loads(m.group(1)).values()) == {1}, e.name


def test_the_exported_graph_bounds_its_sizes_below_by_1():
    from kstrata.backends.tvm.lower import default_graph, lower_bounds_to_one
    from kstrata.tasks.loader import resolve_task

    assert lower_bounds_to_one('R.func_attr({"tir_var_lower_bound": {"s27": 77, "s77": 2}, "num_input": 1})') \
        == 'R.func_attr({"tir_var_lower_bound": {"s27": 1, "s77": 1}, "num_input": 1})'
    for name in ("layernorm", "gemv"):
        text = default_graph(resolve_task(name))
        found = [json.loads(m.group(1)) for m in BOUNDS.finditer(text)]
        assert all(set(b.values()) == {1} for b in found), (name, found)


def test_the_graph_api_sheet_says_to_keep_the_lower_bounds_at_1():
    from kstrata.agents.prompt import api_sheet

    sheet = api_sheet("tvm-llvm", "graph")
    assert '"tir_var_lower_bound"' in sheet and "keep every bound at 1: the hidden tests take sizes down to 1" in sheet
