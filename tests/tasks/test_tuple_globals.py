"""Size globals that are not plain ints (issue #23): tuple and list globals,
tuple assignments, globals derived from sizes at import, and sizes that must
move together (ties), on small KernelBench-style files written for the tests
(no KernelBench file is copied)."""

from __future__ import annotations

import time

import pytest
import torch

from kstrata.tasks import scaled, work
from kstrata.tasks.base import TaskError, int_globals
from kstrata.tasks.loader import load_task
from kstrata.tasks.scaling import fitted_shape, reference_runs

# predictions (B, N) * targets (B,): broadcasting ties N = input_shape[0] to B = batch_size
HINGE = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))

batch_size = 4096
input_shape = (4096,)
dim = 1

def get_inputs():
    return [torch.rand(batch_size, *input_shape), torch.randint(0, 2, (batch_size,)).float() * 2 - 1]

def get_init_inputs():
    return []
'''

MLP = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size, kernel_size):
        super().__init__()
        sizes = [input_size, *layer_sizes]
        self.layers = nn.Sequential(*[nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])
        self.out = nn.Linear(sizes[-1], output_size)
        self.kernel_size = kernel_size

    def forward(self, x):
        return self.out(torch.relu(self.layers(x)))

batch_size = 64
input_size = 2048
layer_sizes = [4096, 2048]
output_size = 1024
kernel_size = (3, 5)

def get_inputs():
    return [torch.randn(batch_size, input_size)]

def get_init_inputs():
    return [input_size, layer_sizes, output_size, kernel_size]
'''

# D, H, W bound by one tuple assignment; LayerNorm(out_channels) over the last dim 2 W ties them
CONV3D = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_channels, out_channels, bias_shape):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, 4, stride=2, padding=1)
        self.norm = nn.LayerNorm(out_channels)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return self.norm(self.conv(x)) + self.bias

batch_size = 16
in_channels = 32
out_channels = 64
D, H, W = 16, 32, 32
bias_shape = (out_channels, 1, 1, 1)

def get_inputs():
    return [torch.rand(batch_size, in_channels, D, H, W)]

def get_init_inputs():
    return [in_channels, out_channels, bias_shape]
'''


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KSTRATA_SHAPES", "scaled")


def _task(tmp_path, name, text):
    p = tmp_path / f"{name}.py"
    p.write_text(text)
    return load_task(p)


def test_tuple_list_and_unpacked_globals_are_size_variables():
    assert int_globals(HINGE) == {"batch_size": 4096, "input_shape[0]": 4096, "dim": 1}
    # list elements are variables; a tuple of small ints (kernel sizes) is not
    assert int_globals(MLP) == {"batch_size": 64, "input_size": 2048, "layer_sizes[0]": 4096,
                                "layer_sizes[1]": 2048, "output_size": 1024}
    got = int_globals(CONV3D)
    assert {k: got[k] for k in ("D", "H", "W")} == {"D": 16, "H": 32, "W": 32}
    assert "bias_shape[0]" not in got  # derived from out_channels: follows it, not a variable
    assert int_globals("x = [1024] * 3\ny = (8192 * 2,)\n") == {"x[0]": 1024, "x[1]": 1024, "x[2]": 1024,
                                                              "y[0]": 16384}


def test_rebinding_sets_elements_and_recomputes_derived_globals(tmp_path):
    t = _task(tmp_path, "conv3d", CONV3D)
    module = t.load_module({"out_channels": 8, "W": 4})
    assert module.bias_shape == (8, 1, 1, 1) and module.W == 4 and module.D == 16
    m = _task(tmp_path, "mlp", MLP).load_module({"layer_sizes[1]": 100})
    assert m.layer_sizes == [4096, 100] and isinstance(m.layer_sizes, list)
    h = _task(tmp_path, "hinge", HINGE).load_module({"input_shape[0]": 33, "batch_size": 33})
    assert h.input_shape == (33,)
    with pytest.raises(TaskError, match="input_shape\\[3\\]"):
        _task(tmp_path, "hinge2", HINGE).load_module({"input_shape[3]": 5})


def test_tied_tuple_global_is_halved_with_its_partner(tmp_path):
    """HingeLoss's size is input_shape = (32768,), tied to batch_size by
    broadcasting: it used to be no variable, so nothing scaled and one
    reference call took 45 s on this CPU."""
    t = _task(tmp_path, "100_HingeLoss", HINGE)
    small, sweep = t.small_shapes, t.sweep_shapes
    assert t.nominal_shape not in small + sweep
    for s in small + sweep:
        assert s["batch_size"] == s["input_shape[0]"] < 4096
        assert work.measured_work(t, s)[1] <= scaled.VERIFY_MAX_BYTES * 1.1
        assert reference_runs(t, s)
    assert scaled.ties(t) == [["batch_size", "input_shape[0]"]]
    assert "input_shape[0]=" in scaled.describe(t)
    timed = fitted_shape(t, max_flops=1e9, max_bytes=1e6)  # the timing-shape fit keeps the tie too
    assert timed["batch_size"] == timed["input_shape[0]"] < 4096 and reference_runs(t, timed)


def test_perturbed_and_octave_shapes_move_tied_sizes_together(tmp_path):
    from kstrata.verify import plan

    t = _task(tmp_path, "100_HingeLoss", HINGE)
    for secret in ("a" * 32, "b" * 32, "c" * 32):
        shapes = plan.perturbed_shapes(t, secret)
        assert shapes and all(s["batch_size"] == s["input_shape[0]"] for s in shapes)
        octs = plan.octave_tests(t, secret, t.sweep_shapes)
        assert all(x.shape_dict["batch_size"] == x.shape_dict["input_shape[0]"] for x in octs)
    # tied sizes that differ (out_channels = 2 W) keep their values; the variant still runs
    c = _task(tmp_path, "conv3d", CONV3D)
    assert scaled.ties(c)
    for s in plan.perturbed_shapes(c, "d" * 32):
        assert reference_runs(c, s)


def test_unpacked_sizes_scale_a_3d_convolution_and_its_derived_bias(tmp_path):
    """``D, H, W = 16, 32, 32`` used to be no variables: the fit could only
    halve batch and channels and stopped 20-100x over its FLOP limit."""
    t = _task(tmp_path, "conv3d", CONV3D)
    fit = t.sweep_shapes[0]
    assert fit["D"] < 16 and fit["H"] < 32 and fit["out_channels"] < 64
    f, _ = work.measured_work(t, fit)
    assert f <= scaled.VERIFY_MAX_FLOPS
    for s in t.small_shapes + t.sweep_shapes:
        assert reference_runs(t, s)


def test_the_limits_are_cut_by_the_references_measured_cost(tmp_path, monkeypatch):
    """A reference whose float64 oracle is far slower per FLOP than the
    limits assume (3-D convolutions) is fitted again with limits cut by its
    measured overrun."""
    # the plain fit without any cut: the real cost is CPU time, which a busy machine's
    # spinning thread pools inflate (CI cut this fit too, and the floors then kept the
    # second one at 1/2 of it)
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path / "cache1"))
    monkeypatch.setattr(scaled, "call_cost", lambda task, shape: 0.0)
    scaled._MEM.clear()
    t = _task(tmp_path, "conv3d", CONV3D)
    plain = dict(t.sweep_shapes[0])
    f0 = work.measured_work(t, plain)[0]
    scaled._MEM.clear()
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path / "cache2"))
    monkeypatch.setattr(scaled, "call_cost", lambda task, shape: 8 * scaled.VERIFY_MAX_CALL_CPU_S
                        if work.measured_work(task, shape)[0] > f0 / 8 else 0.0)
    t2 = _task(tmp_path, "conv3d_b", CONV3D)
    cut = t2.sweep_shapes[0]
    # cut to 1/8 where the variables' floors allow (here D reaches its floor of 16 at 1/4)
    assert work.measured_work(t2, cut)[0] <= f0 / 4 and reference_runs(t2, cut)


def test_call_cost_counts_the_reference_and_its_float64_oracle(tmp_path):
    t = _task(tmp_path, "conv3d", CONV3D)
    s = {**t.nominal_shape, "batch_size": 2, "in_channels": 4, "out_channels": 8, "D": 4, "H": 4, "W": 4}
    state = torch.random.get_rng_state()
    cost = scaled.call_cost(t, s)
    assert cost is not None and cost > 0
    assert torch.equal(torch.random.get_rng_state(), state)
    assert scaled.call_cost(t, {**s, "W": 5}) is None  # LayerNorm(8) over a width of 10: does not run


def test_a_timeout_with_a_candidate_as_fast_as_the_reference_blames_the_reference():
    """34_ConvTranspose3d with ModelNew = Model timed out as 'a hanging or very
    slow candidate' (candidate 154 s, judge 138 s): a candidate no slower than
    the reference's own calls leaves the blame with the shapes."""
    from types import SimpleNamespace

    from kstrata.verdict import Verdict
    from kstrata.verify.runner import Context, Stop

    def blame(judge_s, reference_s, total):
        ctx = SimpleNamespace(started=time.monotonic() - total, judge_s=judge_s, reference_s=reference_s, start_s=0.0,
                              REFERENCE_PACE=Context.REFERENCE_PACE)
        stop = Stop(Verdict.TIMEOUT, "wall_clock", "the candidate did not answer (a hanging or very slow "
                    "candidate)")
        Context.blame_time(ctx, stop)
        return stop

    same = blame(judge_s=138.0, reference_s=70.0, total=292.0)
    assert same.check == "reference_time" and "not for a slow candidate" in same.evidence["message"]
    assert same.evidence["reference_s"] == 70.0
    slow = blame(judge_s=20.0, reference_s=10.0, total=292.0)
    assert slow.check == "wall_clock" and "hanging or very slow candidate" in slow.evidence["message"]
    judge = blame(judge_s=200.0, reference_s=60.0, total=292.0)
    assert judge.check == "reference_time" and "mostly in the task's reference" in judge.evidence["message"]


# a size fixed by the layers (Linear(64 * 32 * 32, ...) needs 32 x 32 images): only the batch scales
FIXED_IMAGE = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv = nn.Conv2d(3, 64, 3, padding=1)
        self.fc = nn.Linear(64 * 32 * 32, num_classes)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))

batch_size = 10
num_classes = 10

def get_inputs():
    return [torch.rand(batch_size, 3, 32, 32)]

def get_init_inputs():
    return [num_classes]
'''


def test_a_large_public_shape_gets_the_large_shapes_tests(tmp_path, monkeypatch):
    """VGG16's sizes are literals in its layers: its smallest shape (batch 1-2)
    still costs 15 GFLOP a call, and its 18 public float64-oracle tests of 9 s
    each outlasted a 300 s verification; a large public shape gets the large
    hidden shape's seeds, draws and oracle."""
    from kstrata.verify import plan

    t = _task(tmp_path, "fixed_image", FIXED_IMAGE)
    small = plan.public_tests(t)
    assert len(small) == len(plan.PUBLIC_SEEDS) * len(t.meta.distributions) * len(t.small_shapes)
    assert all(x.oracle == "fp64" for x in small)
    monkeypatch.setattr(plan, "LARGE_TEST_FLOPS", 1.0)  # every shape counts as large
    monkeypatch.setattr(plan, "ORACLE_MAX_FLOPS", 1.0)
    large = plan.public_tests(t)
    per_shape = plan.LARGE_SEEDS * plan.LARGE_DRAWS
    assert len(large) == per_shape * len(t.small_shapes) < len(small)
    assert all(x.public and x.oracle == "native" and x.param_seed == plan.PUBLIC_SEEDS[0] for x in large)
    assert len({(x.seed, x.dist) for x in large}) == per_shape


# size variables for the channels, but the image size is a literal of get_inputs()
LITERAL_IMAGE = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 5, stride=2, padding=2)

    def forward(self, x):
        return torch.relu(self.conv(x)).mean(dim=(2, 3))

batch_size = 10
in_channels = 112
out_channels = 192

def get_inputs():
    return [torch.rand(batch_size, in_channels, 224, 224)]

def get_init_inputs():
    return [in_channels, out_channels]
'''


def test_literal_input_extents_of_a_file_with_size_variables_scale(tmp_path):
    """EfficientNetMBConv draws torch.rand(batch_size, in_channels, 224, 224):
    its variables alone could not reach the limits, and its verification
    outlasted 300 s; the literal 224 scales too (a "@224" key resizing the input)."""
    t = _task(tmp_path, "mbconv", LITERAL_IMAGE)
    assert scaled.literal_extents(t, t.nominal_shape) == {"@224": 224}
    fit = t.sweep_shapes[0]
    assert fit["@224"] < 224 and work.measured_work(t, fit)[0] <= scaled.VERIFY_MAX_FLOPS
    for s in t.small_shapes + t.sweep_shapes:
        model, inputs, _, _ = t.instantiate(s, 0)
        assert inputs[0].shape[2:] == (s.get("@224", 224),) * 2 and reference_runs(t, s)
    assert "the input extent 224=" in scaled.describe(t)
    # a literal the layers fix (FIXED_IMAGE's Linear(64 * 32 * 32, ...)) stays as it is
    f = _task(tmp_path, "fixed_image", FIXED_IMAGE)
    assert all("@32" not in s for s in f.small_shapes + f.sweep_shapes)


# the constructor reads a size global (KernelBench's 33_VanillaRNN keeps its hidden state)
GLOBAL_IN_INIT = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden = torch.randn((batch_size, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)

    def forward(self, x):
        return torch.tanh(self.i2h(torch.cat((x, self.hidden), dim=1)))

batch_size = 256
input_size = 64
hidden_size = 32

def get_inputs():
    return [torch.rand(batch_size, input_size)]

def get_init_inputs():
    return [input_size, hidden_size]
'''


def test_the_candidates_size_globals_are_rebound_to_the_tests_shape(tmp_path):
    """33_VanillaRNN's own Model as the candidate raised on a hidden test: the
    reference's module was rebound to the test's batch_size, the candidate's
    kept the nominal one its constructor read."""
    from kstrata.backends.pytorch import load_model_new

    t = _task(tmp_path, "vanilla_rnn", GLOBAL_IN_INIT)
    shape = {**t.nominal_shape, "batch_size": 7}
    model, inputs, init, _ = t.instantiate(shape, 0)
    cand = load_model_new(GLOBAL_IN_INIT + "\n\nModelNew = Model\n", init, shape=shape)
    assert cand.hidden.shape == (7, 32) and cand(*inputs).shape == (7, 32)
    # a candidate without the task's globals loads as before
    other = load_model_new("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                           "        return x\n", [], shape={**shape, "input_shape[0]": 3})
    assert other(inputs[0]) is inputs[0]
