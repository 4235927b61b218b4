"""GPU verification speed-ups of issue #18, on the lent H200 (skipped without
CUDA): the judge's test inputs are drawn on the GPU, deterministically per
(seed, shape, distribution), and one candidate's Triton JIT cache is reused by
its later processes of the same role (a second verification compiles nothing,
every file in its cache came back unchanged from the first; a second timing
likewise from the first timing's).

Run: ``PYTHONPATH=src python -m pytest -p no:cacheprovider -q -n 0 tests/verify/test_gpu_verify_speedups.py``
"""

from __future__ import annotations

import pytest
import torch

from kstrata.tasks.inputs import draw_inputs
from kstrata.tasks.meta import DISTRIBUTIONS

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

SHAPE = {"B": 4096, "D": 4096}


def _equal(x: torch.Tensor, y: torch.Tensor) -> bool:
    if x.dtype != y.dtype or x.shape != y.shape or x.device != y.device:
        return False
    if not x.is_floating_point():
        return torch.equal(x, y)
    return torch.equal(x.isnan(), y.isnan()) and torch.equal(x.nan_to_num(0.0, float("inf"), float("-inf")),
                                                             y.nan_to_num(0.0, float("inf"), float("-inf")))


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_gpu_draws_are_deterministic_and_reach_the_host_unchanged(dist):
    from kstrata.tasks.loader import resolve_task

    task = resolve_task("softmax")
    _, _, _, module = task.instantiate(SHAPE, 0)
    host, dev = draw_inputs(module.get_inputs, 11, dist, task.meta.dist_inputs, device="cuda")
    assert dev is not None and all(x.is_cuda for x in dev if isinstance(x, torch.Tensor))
    assert all(x.device.type == "cpu" for x in host if isinstance(x, torch.Tensor))
    assert all(_equal(h, d.cpu()) for h, d in zip(host, dev))
    torch.randn(1 << 20, device="cuda")  # other users of the CUDA generator in between
    torch.cuda.manual_seed_all(99)
    again, _ = draw_inputs(module.get_inputs, 11, dist, task.meta.dist_inputs, device="cuda")
    other, _ = draw_inputs(module.get_inputs, 12, dist, task.meta.dist_inputs, device="cuda")
    assert all(_equal(a, b) for a, b in zip(host, again))
    assert not all(_equal(a, b) for a, b in zip(host, other))
    x = host[0]
    assert tuple(x.shape) == (4096, 4096) and x.dtype == torch.float32 and bool(x.isfinite().any())


def test_one_candidates_triton_cache_is_reused_by_its_later_processes(tmp_path, monkeypatch):
    from kstrata.backends.registry import get_backend
    from kstrata.measure.candidate import time_candidate
    from kstrata.measure.timing import TimingConfig
    from kstrata.sandbox import kernel_cache, status
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import run_protocol

    if not status().usable:
        pytest.skip(f"no sandbox here: {status().reason}")
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path))
    task = resolve_task("softmax")
    src = get_backend("triton").initial_sources(task)
    key = kernel_cache.candidate_key("triton", src, task=task.digest)

    def verify() -> list[dict]:
        n = len(kernel_cache.HISTORY)
        ev = run_protocol(task, "triton", src, "cache-test", "strict", "small", timed_shapes=[SHAPE])
        assert ev["verdict"] == "correct", ev.get("evidence")
        return [h for h in kernel_cache.HISTORY[n:] if h["key"] == key]

    cold = verify()
    assert cold and cold[0]["new"] > 0 and cold[0]["new"] == cold[0]["files"], cold  # compiled, none restored
    assert kernel_cache.archive_path(key).exists()
    warm = verify()
    assert warm and all(h["new"] == 0 and h["files"] >= cold[0]["files"] for h in warm), (cold, warm)
    # timings share a cache of their own (a verification's ran hidden tests): cold once, then warm
    timing_key = kernel_cache.candidate_key("triton", src, "time", task.digest)
    runs = []
    for _ in range(2):
        n = len(kernel_cache.HISTORY)
        time_candidate("triton", task, src, SHAPE, config=TimingConfig(budget_ms=100, max_remeasure=0),
                       with_roofline=False)
        runs.append(kernel_cache.HISTORY[n:])
        assert all(h["key"] == timing_key for h in runs[-1]), runs  # the eager baseline's process kept none
    assert runs[0] and runs[0][0]["new"] > 0, runs
    assert runs[1] and runs[1][0]["new"] == 0 and runs[1][0]["files"] > 0, runs
    assert not kernel_cache.saw_hidden(timing_key) and kernel_cache.saw_hidden(key)
