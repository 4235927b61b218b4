"""The CUDA timing path; skipped without a GPU (run on the lent H200)."""

import pytest
import torch

from kstrata.measure.timing import TimingConfig, measure

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


@pytest.mark.parametrize("graph", [False, True])
def test_cuda_events_and_graphs_measure_2x(graph):
    x = torch.randn(1 << 24, device="cuda")

    def one(t):
        return t * 2

    def two(t):
        return (t * 2) * 3

    cfg = TimingConfig(budget_ms=50, cuda_graph=graph, input_copies=3)
    m = measure(one, [x], two, cfg)
    assert m.method == ("cuda-graph" if graph else "cuda-event")
    assert m.flush["bytes"] == 256 * 1024 * 1024 and m.flush["calls"] > 0
    assert 1.3 < m.speedup.point < 3.0
    aa = measure(one, [x], one, cfg)
    assert 0.9 < aa.speedup.point < 1.1
    assert m.device.startswith("cuda:0")
