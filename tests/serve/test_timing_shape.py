"""The MCP server and ``KernelEnv`` (``kstrata.serve.service.evaluate``) time a
CPU candidate at the shape ``kstrata eval``/``optimize`` choose (``fit`` on a
CPU), not the GPU-sized nominal one, and name it in the reply (newcomer nc21:
an eager baseline of 635 ms instead of ~10 ms, a correct slow candidate lost to
the 300 s timing limit)."""

from __future__ import annotations

import json
import textwrap

from kstrata.execute.pool import CallResult
from kstrata.serve.service import evaluate, load_backend, load_task
from kstrata.tasks.scaling import timing_shape_for
from kstrata.verdict import Verdict
from kstrata.verify.result import Evaluation

BIG_TASK = textwrap.dedent('''
    import torch
    import torch.nn as nn

    KSTRATA = {
        "level": 1, "category": "elementwise", "dtype": "float32",
        "shapes": {"nominal": {"B": 64, "C": 256, "L": 1024}, "small": [{"B": 2, "C": 3, "L": 5}]},
        "flops": "B*C*L", "bytes": "8*B*C*L",
    }
    B, C, L = 64, 256, 1024

    class Model(nn.Module):
        def forward(self, x):
            return torch.relu(x)

    def get_inputs():
        return [torch.randn(B, C, L)]

    def get_init_inputs():
        return []
''')


class _Pool:
    """Records the timer's call; answers as a timed-out worker would."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def call(self, target, *args, timeout_s=None, **kwargs):
        self.calls.append((target, args, kwargs))
        return CallResult(ok=False, kind="timeout", error="no answer within 1 s; worker killed")


def test_cpu_candidates_are_timed_at_the_fitted_shape_and_the_reply_names_it(tmp_path, monkeypatch):
    (tmp_path / "big_relu.py").write_text(BIG_TASK)
    task = load_task("big_relu", tmp_path)
    backend = load_backend("pytorch")
    verified: list = []

    def fake_verify(task, backend, sources, *, timed_shapes=(), **kw):
        verified.append(list(timed_shapes))
        return Evaluation(verdict=Verdict.CORRECT, public_tests=1, hidden_tests=1)

    monkeypatch.setattr("kstrata.verify.verify_candidate", fake_verify)
    pool = _Pool()
    out = evaluate(task, backend, {"pytorch": "x = 1\n"}, secret="s" * 32, pool=pool)
    fitted = timing_shape_for("auto", task, "cpu")  # what `kstrata eval`/`optimize` time at on a CPU
    assert fitted != task.full_shape(None)
    assert verified == [[fitted]]
    (_, args, _), = pool.calls
    assert fitted in args  # the timer was given the fitted shape, not left at its nominal default
    assert out.public["timing"]["shape"] == fitted
    reason = out.public["timing"]["reason"]
    assert "timeout" in reason and "the verdict stands, only the speedup is unknown" in reason
    assert ", ".join(f"{k}={v}" for k, v in fitted.items()) in reason and "--timing-shape" in reason


def test_show_task_names_the_shape_candidates_are_timed_at(tmp_path):
    """The contract an agent reads (show_task, KernelEnv's observation) named only the nominal shape
    (the env's prompt called it "nominal (timed)"), not the fitted one the tools time at on a CPU."""
    from kstrata.serve.env import KernelEnv
    from kstrata.serve.mcp_server import KernelServer

    (tmp_path / "big_relu.py").write_text(BIG_TASK)
    task = load_task("big_relu", tmp_path)
    fitted = timing_shape_for("auto", task, "cpu")
    srv = KernelServer(tmp_path / "run", backend="pytorch", task_dir=tmp_path, time_candidates=False)
    try:
        shown = srv.show_task(task="big_relu")
    finally:
        srv.close()
    assert shown["timed"]["shape"] == fitted and shown["nominal"]["shape"] == task.full_shape(None)
    env = KernelEnv(task, "pytorch", time_candidates=False, workers=1)
    try:
        prompt = env.observation().prompt
    finally:
        env.close()
    assert f"timed at: {json.dumps(fitted)}" in prompt and "nominal (timed)" not in prompt
