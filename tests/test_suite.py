"""The shipped task suite: coverage, metadata, CPU-runnable small shapes, the fp64
upcast used by the oracle, KernelBench directories, and bad task files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from kstrata.tasks.base import TaskError
from kstrata.tasks.loader import load_dir, load_task, resolve_task, suite

TASKS = suite()
BY_NAME = {t.name: t for t in TASKS}
HALF = {"float16", "bfloat16"}


def _run(task, shape, double=False):
    """Run the reference at ``shape``; with ``double`` upcast model and float inputs."""
    model, inputs, _, _ = task.instantiate(shape, seed=0)
    if double:
        model = model.double()
        inputs = [x.double() if torch.is_tensor(x) and x.is_floating_point() else x for x in inputs]
    with torch.no_grad():
        return model(*inputs)


def test_suite_size_and_coverage():
    assert len(TASKS) >= 45
    assert {t.level for t in TASKS} >= {1, 2, 3}
    cats = {t.category for t in TASKS}
    assert {"quant", "matmul", "norm", "softmax", "attention", "reduction", "conv"} <= cats
    dtypes = {t.meta.dtype for t in TASKS}
    assert {"float32", "float16", "bfloat16"} <= dtypes
    for required in (
        "relu", "gelu", "silu", "sum_dim", "mean_dim", "max_dim", "argmax_dim", "softmax",
        "log_softmax", "layernorm", "rmsnorm", "matmul_square", "matmul_tall_skinny",
        "matmul_batched", "gemv", "conv2d", "maxpool2d", "avgpool2d", "transpose", "cumsum",
        "cross_entropy", "matmul_bias_relu", "fused_exp_mean", "add_layernorm",
        "scaled_matmul_softmax", "swiglu", "rmsnorm_matmul", "sdpa", "sdpa_causal",
        "mlp_block", "transformer_block", "small_convnet", "w8a8_gemm", "w4a16_gemm",
        "w4a16_gemv", "quantize_per_tensor", "quantize_per_channel", "dequantize_per_tensor",
        "dequantize_per_channel", "matmul_square_fp16", "layernorm_bf16", "rmsnorm_fp16",
        "sdpa_fp16",
    ):
        assert required in BY_NAME, required


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_metadata_complete(task):
    meta = task.meta
    assert meta.flops and meta.bytes, "flops and bytes formulas are required"
    assert meta.description and meta.shapes.nominal
    assert 1 <= len(meta.shapes.small) <= 3 and meta.shapes.sweep
    nominal = set(meta.shapes.nominal)
    for shape in meta.shapes.small + meta.shapes.sweep:
        assert set(shape) == nominal, shape
    assert any(any(v % 2 for v in s.values()) for s in meta.shapes.small), "an odd small shape"
    assert task.flops() >= 0 and task.bytes() > 0
    for shape in task.small_shapes + task.sweep_shapes:
        assert task.bytes(shape) > 0
    half = meta.dtype in HALF
    assert meta.precision.allow_reduced_precision == half
    if meta.category == "quant":
        assert meta.tolerance.kind in {"quant", "oracle"}
    if meta.tolerance.kind == "quant":
        t = meta.tolerance
        assert t.cosine >= 0.90 and t.rel_l1 <= 0.10 and t.rmse <= 0.15
    assert task.path.parent.name in {"level1", "level2", "level3", "quant"}
    assert '"""' in task.source.splitlines()[0], "module docstring first"


def test_small_shapes_are_small_and_finite():
    # Small shapes are for quick checks: bounded in size (a deterministic bound; the wall-clock limit this test
    # had failed under load: "slowest small shape took 1.19 s"), and their outputs finite and not all zero.
    for task in TASKS:
        for shape in task.small_shapes:
            model, inputs, _, _ = task.instantiate(shape, seed=0)
            elements = sum(x.numel() for x in inputs if torch.is_tensor(x))
            elements += sum(p.numel() for p in model.parameters())
            assert elements <= 1 << 22, (task.name, shape, elements)
            with torch.no_grad():
                y = model(*inputs)
            assert torch.isfinite(y.double()).all(), (task.name, shape)
            if task.meta.tolerance.kind == "exact":
                assert not y.is_floating_point(), task.name
            else:
                assert y.double().abs().max() > 0, (task.name, shape)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_float64_upcast_matches_native(task):
    shape = task.small_shapes[-1]
    y = _run(task, shape)
    y64 = _run(task, shape, double=True)
    assert y.shape == y64.shape
    assert torch.isfinite(y64.double()).all()
    if task.meta.tolerance.kind == "exact":
        assert torch.equal(y, y64)
    elif task.meta.dtype == "float32" and y.is_floating_point():
        torch.testing.assert_close(y.double(), y64.double(), rtol=1e-4, atol=1e-5)
    else:  # half precision or integer (quantized) outputs
        a, b = y.double().flatten(), y64.double().flatten()
        cos = torch.nn.functional.cosine_similarity(a, b, dim=0)
        assert cos > 0.999, (task.name, float(cos))


def test_argmax_inputs_have_no_ties():
    task = BY_NAME["argmax_dim"]
    (x,) = task.instantiate(task.small_shapes[0], seed=0)[1]
    top2 = x.topk(2, dim=1).values
    assert (top2[:, 0] > top2[:, 1]).all()


def test_fused_exp_mean_catches_zero_padding():
    """A kernel padding with 0.0 before exp adds exp(0) = 1 per padded lane."""
    task = BY_NAME["fused_exp_mean"]
    model, (x,), _, _ = task.instantiate({"B": 3, "D": 77}, seed=0)
    x = x - 10  # the 'shifted' distribution
    good = model(x)
    padded = torch.cat([x, torch.zeros(3, 128 - 77)], dim=1)
    bad = torch.exp(padded).sum(dim=1) / 77
    assert (bad - good).abs().min() > 100 * good.abs().max()


KB_MATMUL = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs a single square matrix multiplication (C = A * B)
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)

N = 2048

def get_inputs():
    A = torch.randn(N, N)
    B = torch.randn(N, N)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed
'''

KB_RELU = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs a ReLU activation.
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

batch_size = 16
dim = 16384

def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]

def get_init_inputs():
    return []  # No special initialization inputs needed
'''


def test_load_kernelbench_dir(tmp_path):
    (tmp_path / "level1").mkdir()
    (tmp_path / "level1" / "1_Square_matrix_multiplication_.py").write_text(KB_MATMUL)
    (tmp_path / "19_ReLU.py").write_text(KB_RELU)
    tasks = {t.name: t for t in load_dir(tmp_path)}
    assert set(tasks) == {"1_Square_matrix_multiplication_", "19_ReLU"}
    mm, relu = tasks["1_Square_matrix_multiplication_"], tasks["19_ReLU"]
    assert mm.level == 1 and mm.meta.tolerance.kind == "oracle" and mm.meta.flops is None
    assert mm.nominal_shape == {"N": 2048}
    assert relu.nominal_shape == {"batch_size": 16, "dim": 16384}
    model, inputs, _, _ = mm.instantiate({"N": 33})
    torch.testing.assert_close(model(*inputs), inputs[0] @ inputs[1])
    model, (x,), _, _ = relu.instantiate({"batch_size": 2, "dim": 5})
    assert x.shape == (2, 5) and torch.equal(model(x), x.clamp_min(0))


def test_listing_a_directory_skips_a_bad_file(tmp_path):
    """One broken file in a foreign directory: load_dir stops on it, the listing
    (load_dir_lenient and `kstrata tasks list --path`) shows the rest and names it."""
    from typer.testing import CliRunner

    from kstrata.cli.main import app
    from kstrata.tasks.loader import load_dir_lenient

    (tmp_path / "19_ReLU.py").write_text(KB_RELU)
    (tmp_path / "broken.py").write_text("def (\n")
    with pytest.raises(TaskError, match="broken.py"):
        load_dir(tmp_path)
    tasks, problems = load_dir_lenient(tmp_path)
    assert [t.name for t in tasks] == ["19_ReLU"] and len(problems) == 1 and "broken.py" in str(problems[0])
    out = CliRunner().invoke(app, ["tasks", "list", "--path", str(tmp_path)])
    assert out.exit_code == 0 and "19_ReLU" in out.output and "skipped" in out.output and "broken.py" in out.output


def test_unknown_task_suggests_near_names():
    with pytest.raises(TaskError, match=r"unknown task 'softmx'.*softmax"):
        resolve_task("softmx")
    with pytest.raises(TaskError, match="matmul_square"):
        resolve_task("matmul_sqare")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


GOOD_BODY = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x
N = 4
def get_inputs():
    return [torch.randn(N)]
def get_init_inputs():
    return []
"""


def test_missing_get_inputs(tmp_path):
    body = GOOD_BODY.replace("def get_inputs():\n    return [torch.randn(N)]\n", "")
    assert "get_inputs" not in body
    path = _write(tmp_path, "no_inputs.py", body)
    with pytest.raises(TaskError, match=r"no_inputs\.py.*get_inputs"):
        load_task(path)


def test_syntax_error(tmp_path):
    path = _write(tmp_path, "broken.py", GOOD_BODY + "\ndef oops(:\n")
    with pytest.raises(TaskError, match=r"broken\.py:\d+: syntax error"):
        load_task(path)


def test_unknown_metadata_key(tmp_path):
    meta = 'KSTRATA = {"level": 1, "tolerence": {"k": 2}}\n'
    path = _write(tmp_path, "typo.py", meta + GOOD_BODY)
    with pytest.raises(TaskError, match=r"typo\.py(.|\n)*unknown key 'tolerence'"):
        load_task(path)


def test_wrong_metadata_type(tmp_path):
    meta = 'KSTRATA = {"shapes": {"small": [{"N": "big"}]}}\n'
    path = _write(tmp_path, "badtype.py", meta + GOOD_BODY)
    with pytest.raises(TaskError, match=r"badtype\.py(.|\n)*key 'shapes\.small\.0\.N'"):
        load_task(path)
    path = _write(tmp_path, "badlevel.py", 'KSTRATA = {"level": 7}\n' + GOOD_BODY)
    with pytest.raises(TaskError, match=r"badlevel\.py(.|\n)*key 'level'"):
        load_task(path)


def test_bad_file_in_directory_names_it(tmp_path):
    (tmp_path / "19_ReLU.py").write_text(KB_RELU)
    _write(tmp_path, "zz_bad.py", 'KSTRATA = {"flops": "2*N*import"}\n' + GOOD_BODY)
    with pytest.raises(TaskError, match=r"zz_bad\.py(.|\n)*key 'flops'"):
        load_dir(tmp_path)
