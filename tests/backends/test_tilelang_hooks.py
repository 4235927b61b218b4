"""Launch hooks of the TileLang backends (``kernel_launched``, ``kernel_does_work``).

Runs in a worker of the TileLang environment, like tests/backends/test_tilelang.py.
Case 17 (copied from ../shared/cases/verify): a ``tilelang-c`` candidate that
imports TileLang but does the work on the tensor's ``.numpy()`` view.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kstrata.backends import envs
from kstrata.backends.registry import get_backend
from kstrata.backends.tilelang import hooks
from kstrata.execute import WorkerPool
from kstrata.tasks.loader import resolve_task
from kstrata.verify import verify_candidate

PROBE = "kstrata.backends.tilelang.check:launch_probe"
CASE17 = Path(__file__).resolve().parents[1] / "verify" / "cases" / "17_no_kernel_tilelang" / "candidate.py"
SHAPE = {"B": 5, "D": 77}

#: launches a kernel (a copy), then overwrites its output with a ReLU done by NumPy
COPY_THEN_NUMPY = '''
import tilelang
import tilelang.language as T
import torch
import torch.nn as nn


@tilelang.jit(out_idx=[-1])
def copy_kernel(n, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(n):
                Y[i] = X[i]

    return main


class ModelNew(nn.Module):
    def forward(self, x):
        flat = x.contiguous().view(-1)
        y = copy_kernel(flat.numel())(flat)
        a = flat.numpy()
        y.copy_(torch.as_tensor(a * (a > 0)))
        return y.view(x.shape)
'''


@pytest.fixture(scope="module")
def pool():
    ok, _ = envs.env_ready("tilelang")
    if not ok:
        envs.ensure_env(envs.TILELANG)
    with WorkerPool(size=1, python=str(envs.python_for("tilelang-c"))) as p:
        yield p


def _probe(pool, sources):
    r = pool.call(PROBE, "tilelang-c", str(resolve_task("relu").path), sources, SHAPE, timeout_s=300)
    assert r.ok, f"{r.kind}: {r.error}\n{r.traceback}"
    return r.value


def test_backends_expose_launch_hooks():
    for name in ("tilelang-c", "tilelang-cuda"):
        assert get_backend(name).launch_hooks is hooks


def test_honest_kernel_is_counted_and_does_the_work(pool):
    res = _probe(pool, get_backend("tilelang-c").initial_sources(resolve_task("relu")))
    assert res == {"launches": 1, "ok": True, "noop_ok": False}


def test_no_kernel_candidate_launches_nothing(pool):
    res = _probe(pool, {"source": CASE17.read_text()})
    assert res["ok"] and res["launches"] == 0


def test_host_numpy_after_a_copy_kernel_is_seen_by_noop(pool):
    res = _probe(pool, {"source": COPY_THEN_NUMPY})
    assert res == {"launches": 1, "ok": True, "noop_ok": True}


@pytest.mark.parametrize("preset,check", [("strict", "no_foreign_libraries"), ("warn", "kernel_launched")])
def test_case17_is_rejected(pool, preset, check):
    ev = verify_candidate(resolve_task("relu"), "tilelang-c", {"source": CASE17.read_text()},
                          secret="case17", pool=pool, preset=preset, scope="small", timeout_s=300)
    assert (ev.verdict.value, ev.check) == ("rejected", check), ev.evidence


def test_work_outside_the_kernel_is_rejected_by_kernel_does_work(pool):
    ev = verify_candidate(resolve_task("relu"), "tilelang-c", {"source": COPY_THEN_NUMPY},
                          secret="copy", pool=pool, preset="warn", scope="small", timeout_s=300)
    assert (ev.verdict.value, ev.check) == ("rejected", "kernel_does_work"), ev.evidence


def test_honest_kernel_passes_the_verifier(pool):
    sources = get_backend("tilelang-c").initial_sources(resolve_task("relu"))
    ev = verify_candidate(resolve_task("relu"), "tilelang-c", sources, secret="honest", pool=pool,
                          scope="small", timeout_s=300)
    assert ev.verdict.value == "correct", (ev.check, ev.evidence)
