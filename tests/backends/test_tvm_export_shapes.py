"""TVM import of plain KernelBench-like files (issue #23): the export and the
MetaSchedule baseline work at the shape asked for, a GPU-sized nominal shape
is never exported at, a size baked into the parameters is re-exported, and an
export that does not finish is cut off with one clear message.

The task files are small KernelBench-format files written by the tests."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tvm")

from kstrata.backends.registry import get_backend  # noqa: E402
from kstrata.backends.tvm import lower  # noqa: E402
from kstrata.tasks.loader import load_task  # noqa: E402

LAYER_NORM = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        return self.ln(x)

batch_size = 4
features = 8
dim1 = 16
dim2 = 16

def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]

def get_init_inputs():
    return [(features, dim1, dim2)]
'''

HUGE_ADD = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """KernelBench's GPU sizes: two 6.4 GB inputs at the nominal shape."""
    def forward(self, a, b):
        return a + b

rows = 4096
cols = 393216

def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]

def get_init_inputs():
    return []
'''

SLOW_EXPORT = '''import time
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        time.sleep(0.5)  # stands for an export that unrolls a long loop
        return x + 1

n = 16

def get_inputs():
    return [torch.randn(n)]

def get_init_inputs():
    return []
'''


def _task(tmp_path, name, text):
    p = tmp_path / f"{name}.py"
    p.write_text(text)
    return load_task(p)


def test_a_size_baked_into_the_parameters_gets_a_graph_for_the_asked_shape(tmp_path):
    task = _task(tmp_path, "ln_baked", LAYER_NORM)
    shape = task.full_shape({"batch_size": 3, "dim1": 8})
    graph = lower.graph_for_shape(task, shape)
    # MetaSchedule edits the header (build: static); the text must still lower at the shape
    edited = lower.with_build(graph, "static")
    lowered = lower.lower_graph(task, edited, shape)
    assert lowered.shape == shape
    # the shape-generic graph (torch.export baked normalized_shape in), edited the
    # same way, is what failed before
    assert lower.default_graph(task) != graph
    # the default graph with only its header's choices changed is re-exported at the shape, the choices kept
    # (4850df7: the GPU backends' fusion choice); it raised SpecializedGraphError before
    again = lower.lower_graph(task, lower.with_build(lower.default_graph(task), "static"), shape)
    assert again.shape == shape


def test_a_gpu_sized_nominal_shape_is_never_exported_at(tmp_path, monkeypatch):
    task = _task(tmp_path, "huge_add", HUGE_ADD)
    seen = []
    real = lower.export_graph

    def spy(t, shape=None, symbolic=True):
        seen.append(t.full_shape(shape if shape is not None else lower._export_shape(t)))
        return real(t, shape, symbolic)

    monkeypatch.setattr(lower, "export_graph", spy)
    lower._default_graph_cached.cache_clear()
    lower.default_graph(task)
    assert seen and all(lower._shape_elements(task, s) <= lower.EXPORT_ELEMENTS for s in seen)
    assert task.nominal_shape not in seen


def test_an_export_that_does_not_finish_is_cut_off_with_one_message(tmp_path, monkeypatch):
    monkeypatch.setenv("KSTRATA_EXPORT_TIMEOUT_S", "0.2")
    task = _task(tmp_path, "slow_export", SLOW_EXPORT)
    lower._default_graph_cached.cache_clear()
    with pytest.raises(NotImplementedError) as e:
        get_backend("tvm-llvm").initial_sources(task)
    msg = str(e.value)
    assert "did not finish within 0.2 s" in msg and "KSTRATA_EXPORT_TIMEOUT_S" in msg and "\n" not in msg
    assert isinstance(e.value.__cause__, lower.ExportTimeout)


TRANSPOSED_CONV_3D = (Path(__file__).parent / "data" / "transposed_conv3d.py").read_text()


@pytest.mark.slow
def test_optimize_on_an_op_tvm_cannot_import_ends_with_one_line(tmp_path):
    """TVM 0.27's frontend has no 5-D transposed convolution: ``optimize``
    says so in one error line, with no traceback."""
    from typer.testing import CliRunner

    from kstrata.cli.main import app

    task = tmp_path / "ct3d.py"
    task.write_text(TRANSPOSED_CONV_3D)
    r = CliRunner().invoke(app, ["optimize", str(task), "--backend", "tvm-llvm", "--budget", "evals=1",
                                 "--out", str(tmp_path / "run")], env={"COLUMNS": "400"})
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit), (r.output, r.exception)
    assert "Traceback" not in r.output
    errors = [ln for ln in r.output.splitlines() if ln.lower().startswith("error")]
    assert len(errors) == 1 and "does not lower" in errors[0] and "transposed convolution" in errors[0]


def test_the_shape_solvers_logged_tracebacks_are_held_back_during_export(monkeypatch):
    """torch.export's symbolic-shape solver logs a whole traceback as a warning
    when it cannot print a constraint (KernelBench's 92_cumsum_exclusive): the
    export holds that logger at ERROR, and gives it back afterwards."""
    import logging

    import torch

    from kstrata.backends.tvm.lower import LoweringError, export_graph
    from kstrata.tasks.loader import resolve_task

    log = logging.getLogger("torch.fx.experimental.symbolic_shapes")
    before = log.level
    seen = []

    def fake_export(*a, **k):
        seen.append(log.getEffectiveLevel())
        raise RuntimeError("stop here")

    monkeypatch.setattr(torch.export, "export", fake_export)
    with pytest.raises(LoweringError):
        export_graph(resolve_task("relu"))
    assert seen == [logging.ERROR] and log.level == before
