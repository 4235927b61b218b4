"""Red-team round rt52 (2026-12-05): TVM PrimFuncs whose parallel iterations race in disguise.

Case folder ``cases/rt52_tvm_race_disguised`` (``expected.txt`` says what each
row did before and why).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CASE = Path(__file__).resolve().parent / "cases" / "rt52_tvm_race_disguised"


def _race(graph_text: str) -> str | None:
    """:func:`parallel_race` of the graph's PrimFunc ``row_sum``."""
    import tvm

    from kstrata.backends.tvm.lower import parse_graph
    from kstrata.backends.tvm.races import parallel_race

    _, body = parse_graph(graph_text)
    return parallel_race(tvm.script.from_source(body)["row_sum"])


def _graph(name: str) -> str:
    return (CASE / name / "graph.py").read_text()


RACES = [
    ("index_that_folds", "stores to the same element of y"),
    ("guard_that_always_holds", "stores to the same element of y"),
    ("reads_the_other_part", "c = 1 of the parallel loop c reads part[T.int64(0)], and iteration c = 0 stores"),
    ("last_part_adds_the_others", "c = 3 of the parallel loop c reads part[k], and iteration c = 0 stores part[T.int64(0)]"),
    ("shared_accumulator", "stores to the same element of acc"),
]


@pytest.mark.parametrize("name,words", RACES)
def test_rt52_disguised_parallel_races_are_found(name, words):
    why = _race(_graph(name))
    assert why is not None and words in why, why


def test_rt52_a_guard_that_holds_for_two_of_three_iterations_races():
    # `if c <= 1` in a loop of three names c and is not always true, but iterations 0 and 1 both add into y[i]
    text = _graph("guard_that_always_holds").replace("T.parallel(T.int64(2))", "T.parallel(T.int64(3))")
    text = text.replace("if c < T.int64(2):", "if c <= T.int64(1):")
    assert "if c <= T.int64(1):" in text
    why = _race(text)
    assert why is not None and "stores to the same element of y" in why, why
    # one iteration only (c == 1): no race
    assert _race(text.replace("if c <= T.int64(1):", "if c == T.int64(1):")) is None


def test_rt52_honest_parallel_parts_are_not_flagged():
    honest = (CASE.parent / "rt50_tvm_parallel_race" / "honest" / "graph.py").read_text()
    assert _race(honest) is None
    # each iteration adding only what it stored itself (part[c]) into its own output column is no race either
    own = _graph("reads_the_other_part").replace(
        "if c == T.int64(1):\n                    y[i, T.int64(0)] = part[T.int64(0)] + part[T.int64(1)]",
        "y[i, T.int64(0) * c] = part[c]")
    assert "part[c]\n" in own
    assert _race(own) is not None  # y[i, 0 * c]: the index folds to one element
    own = own.replace("y[i, T.int64(0) * c] = part[c]", "x[i, c] = part[c]")
    assert _race(own) is None


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("name", ["index_that_folds", "guard_that_always_holds", "reads_the_other_part"])
def test_rt52_disguised_tvm_races_are_not_built(kstrata_eval, name):
    d = kstrata_eval("sum_dim", f"rt52_tvm_race_disguised/{name}/graph.py", "--no-time", "--scope", "small",
                     backend="tvm-llvm")
    assert d["verdict"] == "compile_error", f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"
    assert "parallel loop c" in d["evidence"]["message"]


THREADS = CASE.parent / "rt52_tvm_thread_race"


def test_rt52_threads_of_a_block_adding_into_one_element_race():
    text = (THREADS / "race" / "graph.py").read_text()
    why = _race(text)
    assert why is not None and "threadIdx.x loop t stores to the same element of y" in why, why
    # honest: thread 0 alone sums the row (the other thread idles)
    honest = text.replace(
        "for j in range(T.if_then_else(t == T.int64(0), T.int64(1), d - T.int64(1))):\n"
        "                    acc[T.int64(0)] = acc[T.int64(0)] + x[i, t + j]",
        "for j in range(d):\n                    acc[T.int64(0)] = acc[T.int64(0)] + x[i, j]")
    honest = honest.replace(
        "                    y[i, T.int64(0)] = T.float32(0)\n"
        "                y[i, T.int64(0)] = y[i, T.int64(0)] + acc[T.int64(0)]",
        "                    y[i, T.int64(0)] = acc[T.int64(0)]")
    assert honest.count("y[i, T.int64(0)] = acc[T.int64(0)]") == 1 and "x[i, j]" in honest
    assert _race(honest) is None


@pytest.mark.slow
@needs_sandbox
def test_rt52_tvm_opencl_thread_race_is_not_built(kstrata_eval):
    from kstrata.backends.registry import get_backend

    if not get_backend("tvm-opencl").availability().usable:
        pytest.skip("tvm-opencl is not usable here")
    d = kstrata_eval("sum_dim", "rt52_tvm_thread_race/race/graph.py", "--no-time", "--scope", "small",
                     backend="tvm-opencl")
    assert d["verdict"] == "compile_error", f"{d['verdict']}: {str((d.get('evidence') or {}).get('message'))[:300]}"
    assert "threadIdx.x loop t" in d["evidence"]["message"]
