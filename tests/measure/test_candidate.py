import pytest
import torch

from kstrata.backends.base import CandidateLoadError
from kstrata.backends.pytorch import PyTorchBackend
from kstrata.measure.candidate import time_candidate
from kstrata.measure.timing import Measurement, TimingConfig
from kstrata.tasks.loader import resolve_task

FAST = TimingConfig(budget_ms=30, min_reps=8, max_reps=40, warmup_ms=2, flush_bytes=1 << 20,
                    max_remeasure=0)


def test_time_candidate_against_eager_with_roofline():
    task = resolve_task("rmsnorm")
    m = time_candidate("pytorch", task, PyTorchBackend().initial_sources(task), {"B": 16, "D": 256},
                       config=FAST)
    assert isinstance(m, Measurement)
    assert m.labels["baseline"] == "eager" and m.labels["shape"] == {"B": 16, "D": 256}
    # A paired timing: one baseline sample per candidate sample, and an interval
    # around the point. Whether the same code reads about 1 is judged in
    # tests/verify/test_cases_verify.py (case03) with a full timing budget and the
    # contention probe: this 30 ms budget is below what the probe can judge
    # (contention.MIN_WALL_S), and on a busy CI machine it read 6.4x [1.5, 14].
    assert len(m.candidate_ms) == len(m.baseline_ms) == m.reps
    s = m.speedup
    assert 0 < s.low <= s.point <= s.high and s.confidence == 0.95
    roof = m.roofline["candidate"]
    assert roof["bound"] == "memory" and roof["floor_ms"] > 0 and roof["achieved_gbs"] > 0
    assert m.roofline["ceilings"]["bandwidth_gbs"] > 0
    assert Measurement.from_json(m.to_json()) == m


def test_time_candidate_bad_sources_raise_load_error():
    with pytest.raises(CandidateLoadError):
        time_candidate("pytorch", "rmsnorm", {"source": "x = 1\n"}, {"B": 4, "D": 8}, config=FAST,
                       with_roofline=False)
    with pytest.raises(ValueError, match="unknown baseline"):
        task = resolve_task("rmsnorm")
        time_candidate("pytorch", task, PyTorchBackend().initial_sources(task), {"B": 4, "D": 8},
                       baseline="nope", config=FAST, with_roofline=False)


def test_time_candidate_findings_and_counters():
    task = resolve_task("rmsnorm")
    m = time_candidate("pytorch", task, PyTorchBackend().initial_sources(task), {"B": 64, "D": 512},
                       config=FAST, counters=True)
    assert m.counters["tool"] == "perf"
    assert m.counters["ok"] or m.counters["reason"]  # counted, or says why not (VMs)
    for f in m.findings:
        assert f["level"] in ("graph", "schedule", "source") and f["text"]
    assert Measurement.from_json(m.to_json()) == m


def test_timed_output_check_leaves_the_device_model_on_its_device():
    """The float64 copy for the timed-output check is made from a copy: moving
    the device model itself to the host (Module.cpu() moves in place) made
    every CUDA timing of a task with parameters fail ('weight is on cpu')."""
    from kstrata.measure.candidate import _checker
    from kstrata.tasks.loader import resolve_task

    class Spy(torch.nn.Linear):
        def cpu(self):  # noqa: D401 - records the move
            self.moved = True
            return super().cpu()

    task = resolve_task("rmsnorm")
    model = Spy(4, 4)
    xs = [torch.randn(3, 4)]
    check = _checker(task, model, [xs])
    assert not getattr(model, "moved", False)
    assert check(0, [model(xs[0]).detach()]) is None


def test_timed_output_check_allows_a_reduction_summed_in_another_order():
    """The timed-output check applies the judge's reordered-reduction allowance
    (issue #23): a correct LayerNorm whose sums run left to right in float32
    passes on the shifted draw, a wrong scale does not."""
    import numpy as np

    from kstrata.measure.candidate import _checker
    from kstrata.tasks.loader import resolve_task

    def seq_sum(x):
        return torch.from_numpy(np.add.accumulate(x.numpy(), axis=-1, dtype=np.float32)[..., -1].copy())

    task = resolve_task("rmsnorm")  # any fp32 task with the default oracle policy
    model = torch.nn.LayerNorm(4096, elementwise_affine=False)
    torch.manual_seed(0)
    xs = [torch.rand(8, 4096) - 10]
    mean = seq_sum(xs[0]) / 4096
    d = xs[0] - mean[:, None]
    out = d / torch.sqrt(seq_sum(d * d) / 4096 + 1e-5)[:, None]
    check = _checker(task, model, [xs])
    assert check(0, [out]) is None
    assert check(0, [out * 1.01]) is not None


def test_probe_sets_draw_every_other_distribution_at_the_timing_shape():
    """The timing's probes (RemoteCandidate.probe): every distribution of the task
    but its own draw on the CPU, at most GPU_PROBES on a GPU, at the timed shape."""
    from kstrata.measure.candidate import GPU_PROBES, probe_sets

    task = resolve_task("softmax")
    _, inputs, _, module = task.instantiate({"B": 8, "D": 64}, 0)
    probes = probe_sets(task, module, 5, "cpu")
    assert [d for d, _ in probes] == [d for d in task.meta.distributions if d != "normal"]
    assert all(xs[0].shape == inputs[0].shape and xs[0].dtype == inputs[0].dtype for _, xs in probes)
    large = dict(probes)["large"][0]
    assert large.abs().max() > 10 * inputs[0].abs().max() / 2  # the 'large' draw is the normal one x 100
    assert GPU_PROBES < len(probes)
