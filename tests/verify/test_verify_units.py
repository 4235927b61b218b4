"""Units of the verifier: tolerance, plan secrecy, static presets, feedback, weak guard, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import torch

from kstrata.tasks.loader import load_task, resolve_task
from kstrata.tasks.meta import Tolerance
from kstrata.verdict import Verdict
from kstrata.verify import Evaluation
from kstrata.verify.feedback import describe_tensor
from kstrata.verify.integrity.registry import PRESETS
from kstrata.verify.integrity.static import static_findings
from kstrata.verify.plan import hidden_tests, public_tests
from kstrata.verify.tolerance import compare
from kstrata.verify.weak import weak_fakes

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def test_tolerance_nan_and_tf32_like_error():
    o = torch.randn(64, 64, dtype=torch.float64)
    n = o.float()
    assert compare(n, o, n, Tolerance()).ok
    bad = n.clone()
    bad[3, 5] = float("nan")
    c = compare(bad, o, n, Tolerance())
    assert not c.ok and c.stats["wrong"] == 1
    tf32_like = (o * (1 + 5e-4)).float()  # ~TF32 relative error
    assert not compare(tf32_like, o, n, Tolerance()).ok


def test_hidden_set_depends_on_secret_only():
    t = resolve_task("relu")
    a, b = hidden_tests(t, "s1"), hidden_tests(t, "s2")
    assert a == hidden_tests(t, "s1") and {x.seed for x in a} != {x.seed for x in b}
    pub = {x.seed for x in public_tests(t)}
    assert len({x.seed for x in a}) >= 3 and not pub & {x.seed for x in a}
    assert all(not x.public for x in a) and all(x.public for x in public_tests(t))


def test_static_backend_dependent_and_warn_preset():
    src = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
    assert static_findings(src, dsl=False) == []
    assert [f.check for f in static_findings(src, dsl=True)] == ["no_torch_compute"]
    assert PRESETS["warn"]["no_exception_fallback"] == "warn"
    assert PRESETS["strict"]["no_exception_fallback"] == "error"


def test_feedback_tail_tile_and_constant_ratio():
    o = torch.randn(4, 77, dtype=torch.float64)
    c = o.clone()
    c[:, 64:] = 0
    items = {i["kind"]: i for i in describe_tensor(c, o, (c - o).abs() > 1e-9, {"max_err": 1.0})}
    assert items["tail_tile"]["data"]["size"] == 77 and 64 % items["tail_tile"]["data"]["tile"] == 0
    scaled = o * 8.0
    items = {i["kind"]: i for i in describe_tensor(scaled, o, torch.ones_like(o, dtype=torch.bool), {})}
    assert abs(items["constant_ratio"]["data"]["ratio"] - 8.0) < 1e-9
    assert "1/sqrt(64)" in items["constant_ratio"]["text"]


def test_evaluation_json_round_trip():
    ev = Evaluation(Verdict.REJECTED, "no_caching", {"message": "m"}, [{"kind": "k"}], 3, 4, 1.5)
    again = Evaluation.from_dict(json.loads(ev.to_json()))
    assert again == ev and again.verdict is Verdict.REJECTED


def test_weak_guard(tmp_path):
    weak = tmp_path / "weak.py"
    weak.write_text("import torch\nKSTRATA = {'shapes': {'small': [{'N': 16}]}}\nN = 16\n"
                    "class Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 0\n"
                    "def get_inputs():\n    return [torch.randn(N)]\ndef get_init_inputs():\n    return []\n")
    assert set(weak_fakes(load_task(weak))) == {"zeros", "constant", "other_seed"}
    assert weak_fakes(resolve_task("softmax")) == []


def _cli(*args):
    return subprocess.run([str(Path(sys.executable).parent / "kstrata"), *args], capture_output=True, text=True)


def test_eval_cli_json_and_errors():
    r = _cli("eval", "relu", str(CORPUS / "bad" / "relu_patched_timer.py"), "--backend", "pytorch",
             "--json", "--scope", "small")
    out = json.loads(r.stdout)
    assert out["verdict"] == "rejected" and out["check"] == "no_monkey_patching"
    # the bad inputs through the CLI in this process (the script itself ran above; each
    # run of it imports torch in a new interpreter): exit 2, the error on stderr
    from typer.testing import CliRunner

    from kstrata.cli.main import app

    for bad in (("eval", "nope_task", __file__), ("eval", "relu", "/no/such.py"),
                ("eval", "relu", __file__, "--backend", "nope")):
        r = CliRunner().invoke(app, list(bad))
        assert r.exit_code == 2 and "error:" in r.stderr and "error:" not in r.stdout, (bad, r.output)


def test_large_hidden_shapes_get_two_seeds_two_draws_and_run_last():
    from kstrata.verify.plan import HIDDEN_SEEDS, LARGE_TEST_FLOPS

    t = resolve_task("matmul_square")  # sweep up to N=2053: 17 GFLOP per call
    tests = hidden_tests(t, "s1")
    per_shape = {}
    for x in tests:
        per_shape.setdefault(x.shape, []).append(x)
    costs = [t.flops(dict(x.shape)) for x in tests]
    assert costs == sorted(costs)  # cheapest shapes first
    for shape, xs in per_shape.items():
        if t.flops(dict(shape)) > LARGE_TEST_FLOPS:
            assert len({x.seed for x in xs}) >= 2 and len({x.dist for x in xs}) >= 2
            assert xs[0].dist == t.meta.distributions[0] and all(x.oracle == "native" for x in xs)
        else:
            assert len(xs) == HIDDEN_SEEDS * len(t.meta.distributions)
            assert all(x.oracle == "fp64" for x in xs)
    assert any(t.flops(dict(s)) > LARGE_TEST_FLOPS for s in per_shape)
    assert any(t.flops(dict(s)) <= LARGE_TEST_FLOPS for s in per_shape)
