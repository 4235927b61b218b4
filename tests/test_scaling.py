"""Timing shapes fitted to a CPU from the task's FLOP and byte formulas."""

from __future__ import annotations

import pytest

from kstrata.tasks.loader import resolve_task
from kstrata.tasks.scaling import (
    CPU_MAX_BYTES,
    CPU_MAX_FLOPS,
    fitted_shape,
    measured_work,
    parse_shape_option,
)


@pytest.mark.parametrize("name", ["matmul_square", "relu", "conv2d", "sdpa", "w4a16_gemv"])
def test_fitted_shape_fits_and_runs(name):
    task = resolve_task(name)
    shape = fitted_shape(task)
    assert task.flops(shape) <= CPU_MAX_FLOPS and task.bytes(shape) <= CPU_MAX_BYTES
    assert shape != task.nominal_shape  # the suite's nominal shapes are GPU-sized
    # each dimension is the nominal one halved j >= 0 times (rounding down)
    for k, v in shape.items():
        n = task.nominal_shape[k]
        assert any(v == n // 2 ** j for j in range(n.bit_length())), (k, v, n)
    model, inputs, _, _ = task.instantiate(shape, 0)
    assert model(*inputs) is not None
    assert fitted_shape(task) == shape  # deterministic


def test_fitted_shape_keeps_a_small_task(tmp_path):
    task = resolve_task("relu")
    assert fitted_shape(task, max_flops=1e30, max_bytes=1e30) == task.nominal_shape
    p = tmp_path / "bare.py"
    p.write_text("import torch\nN = 64\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                 "        return x + 1\ndef get_inputs():\n    return [torch.randn(N)]\n"
                 "def get_init_inputs():\n    return []\n")
    assert fitted_shape(resolve_task(str(p))) == {"N": 64}


def test_a_kernelbench_file_without_formulas_is_fitted_by_its_measured_work(tmp_path):
    """The newcomer case: l2norm_rows.py (2048 x 1024 fp32, no KSTRATA dict) used
    to stop optimize with 'no flops or bytes formula'; now its bytes, measured
    on the meta device, fit it (in + out = 16 MiB at nominal, over the limit)."""
    p = tmp_path / "l2norm_rows.py"
    p.write_text("import torch\nimport torch.nn as nn\nbatch_size = 2048\ndim = 1024\n"
                 "class Model(nn.Module):\n    def forward(self, x):\n"
                 "        n = torch.sqrt((x * x).sum(dim=1, keepdim=True))\n"
                 "        return x / torch.clamp(n, min=1e-12)\n"
                 "def get_inputs():\n    return [torch.randn(batch_size, dim)]\n"
                 "def get_init_inputs():\n    return []\n")
    task = resolve_task(str(p))
    assert task.meta.flops is None and task.meta.bytes is None
    assert measured_work(task, task.nominal_shape) == (0.0, 2 * 2048 * 1024 * 4)
    shape = fitted_shape(task)
    assert shape == {"batch_size": 1024, "dim": 1024}
    assert measured_work(task, shape)[1] <= CPU_MAX_BYTES
    assert parse_shape_option("fit", task) == shape


def test_a_reference_that_cannot_run_on_meta_falls_back_to_nominal(tmp_path):
    p = tmp_path / "numpy_ref.py"
    p.write_text("import torch\nN = 4096\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                 "        return torch.from_numpy(x.numpy() + 1)\ndef get_inputs():\n"
                 "    return [torch.randn(N, N)]\ndef get_init_inputs():\n    return []\n")
    task = resolve_task(str(p))
    assert fitted_shape(task) == task.nominal_shape


def test_parse_shape_option():
    task = resolve_task("relu")
    assert parse_shape_option("nominal", task) == task.nominal_shape
    assert parse_shape_option("fit", task) == fitted_shape(task)
    assert parse_shape_option("B=8", task) == {**task.nominal_shape, "B": 8}
    with pytest.raises(ValueError, match="has no shape variable 'Q'"):
        parse_shape_option("Q=3", task)
    with pytest.raises(ValueError, match="not NAME=INT"):
        parse_shape_option("B=x", task)


def test_zero_or_negative_sizes_are_refused():
    task = resolve_task("relu")
    for bad in ("B=0", "B=-4"):
        with pytest.raises(ValueError, match="at least 1"):
            parse_shape_option(bad, task)


def test_resumed_run_keeps_its_timing_shape(tmp_path):
    """--resume reads the stored shape; asking for another one is an error, not ignored."""
    from kstrata.cli.errors import OptionError
    from kstrata.cli.optimize import _timing_shape
    from kstrata.store.run_store import RunStore

    task = resolve_task("relu")
    run = tmp_path / "run"
    stored = {"B": 64, "D": 128}
    RunStore.create(run, {"cli": {"timing_shape": stored}}).close()
    assert _timing_shape("auto", task, None, run) == stored
    assert _timing_shape("B=64,D=128", task, None, run) == stored
    with pytest.raises(OptionError, match="keeps its timing shape"):
        _timing_shape("B=8", task, None, run)
