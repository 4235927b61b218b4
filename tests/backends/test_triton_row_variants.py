"""The built-in Triton proposer's mechanical variants of the shipped row-wise
kernels (softmax, rmsnorm, layernorm, log_softmax, cross_entropy) match the
reference under Triton's interpreter at the task's small shapes and at its
sweep shapes (those small enough for the interpreter): several rows per
program (the tail guard at row counts that do not divide), the two-pass split
over chunks smaller than the row (several chunks and a ragged last one), both
together, and the autotune-style sweep configurations."""

from __future__ import annotations

import math

import pytest

from kstrata import kernels
from kstrata.backends.triton import tune_rules as tr
from kstrata.execute import WorkerPool
from kstrata.tasks.loader import resolve_task

CHECK = "kstrata.backends.tilelang.check:check_candidate"
ROW_TASKS = ("softmax", "rmsnorm", "layernorm", "log_softmax", "cross_entropy")
#: the largest sweep shape (product of its sizes) run under the interpreter: the sweep's
#: 3 x 4099 (a row of several chunks and a ragged last one) runs, its 127 x 1001 (ten times the
#: interpreter's time, and nothing the 3- and 5-row shapes leave untested) does not
MAX_ELEMENTS = 20_000


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(size=1, env={"TRITON_INTERPRET": "1"}) as p:
        yield p


def shapes(task):
    """The small shapes, then the sweep shapes the interpreter runs in seconds."""
    sweep = [s for s in task.sweep_shapes if math.prod(s.values()) <= MAX_ELEMENTS]
    return [*task.small_shapes, *(s for s in sweep if s not in task.small_shapes)]


def cases(text):
    """``{label: text}``: the start, the structural variants, the two-pass split
    at its smallest chunk with and without rows per program, and the sweep."""
    def setv(t, name, value):
        return tr.with_value(t, {u.name: u for u in tr.find_tunables(t)}[name], value)

    two = setv(setv(text, "TWO_PASS", 1), "CHUNK", min(next(u for u in tr.find_tunables(text)
                                                             if u.name == "CHUNK").choices))
    out = {"initial": text, "two-pass": two, "two-pass, 4 rows per program": tr.rows_per_program(two, 4)}
    out.update({v.description: v.text for v in tr.structural_variants(text)})
    out.update({v.description: v.text for v in tr.sweep_variants(text)})
    return out


def _check(pool, task, text, shape):
    r = pool.call(CHECK, "triton-interp", str(task.path), {"source": text}, shape, atol=1e-4, rtol=1e-4,
                  timeout_s=600)
    assert r.ok, f"{r.kind}: {r.error}\n{r.traceback}"
    return r.value


@pytest.mark.slow
@pytest.mark.parametrize("name", ROW_TASKS)
def test_row_variants_across_the_sweep(pool, name):
    task = resolve_task(name)
    chosen = shapes(task)
    assert len(chosen) > len(task.small_shapes)  # at least one sweep shape runs
    texts = cases(kernels.initial_source("triton", name))
    assert len(texts) >= 7 and all(texts.values())
    for label, text in texts.items():
        for shape in chosen:
            got = _check(pool, task, text, shape)
            assert got["ok"], (name, label, shape, got)
