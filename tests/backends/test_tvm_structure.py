"""What a lowered graph leaves to edit (:mod:`kstrata.backends.tvm.structure`),
from the sandboxed lowering the agents' prompts use: the counts the router
reads to skip a level with nothing to edit (issue 19, m22)."""

from __future__ import annotations

from kstrata.agents.exemplars import all_exemplars
from kstrata.backends.registry import get_backend
from kstrata.backends.tvm.structure import checked_structure
from kstrata.tasks.loader import resolve_task


def test_the_sandboxed_lowering_reports_blocks_and_open_loops():
    backend = get_backend("tvm-llvm")
    gemv, softmax = resolve_task("gemv"), resolve_task("softmax")
    # gemv's default graph: one R.matmul, one block (m22: the graph level declined it twice)
    one_op = backend.level_structure(gemv, backend.initial_sources(gemv))
    assert list(one_op.values()) == [{"blocks": 1, "open_loops": 2}]
    # softmax's default graph: one PrimFunc of four blocks (max, exp, sum, normalize), all loops serial
    (fused,) = backend.level_structure(softmax, backend.initial_sources(softmax)).values()
    assert fused["blocks"] == 4 and fused["open_loops"] > 0
    # the softmax exemplar's hand-written PrimFunc: one block under a T.parallel row loop (m22 softmax #3)
    ex = next(e for e in all_exemplars() if e.name == "softmax_rows_tvm")
    rows = backend.level_structure(softmax, ex.check_sources(backend.initial_sources(softmax)))
    assert rows == {"softmax_rows": {"blocks": 1, "open_loops": 0}}
    # a graph that does not lower: no structure
    assert backend.level_structure(softmax, {"graph": "# kstrata-tvm graph\nnot a module\n"}) is None


def test_only_counts_in_the_expected_shape_come_back_from_the_sandbox():
    assert checked_structure({"f": {"blocks": 2, "open_loops": 0}}) == {"f": {"blocks": 2, "open_loops": 0}}
    for bad in ([], {"f": {"blocks": -1, "open_loops": 0}}, {"f": {"blocks": True, "open_loops": 0}},
                {"f": {"blocks": 1}}, {"f": {"blocks": 1, "open_loops": 0, "x": 1}}, {1: {}}):
        assert checked_structure(bad) is None, bad
