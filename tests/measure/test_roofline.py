import json

import pytest

from kstrata.measure import roofline
from kstrata.measure.roofline import Ceilings, analyze, floor_ms

C = Ceilings(device="test", dtype="float32", bandwidth_gbs=100.0, gflops=1000.0)


def test_ridge_and_memory_bound_point():
    assert C.ridge == 10.0
    # 1e9 bytes, 1e9 flops (intensity 1) in 20 ms: 50 GB/s, 50 GFLOP/s
    p = analyze(20.0, flops=1e9, nbytes=1e9, c=C)
    assert p.achieved_gbs == pytest.approx(50.0)
    assert p.achieved_gflops == pytest.approx(50.0)
    assert p.intensity == pytest.approx(1.0)
    assert p.bound == "memory"
    assert p.fraction == pytest.approx(0.5)  # attainable = 1 * 100 GFLOP/s
    assert p.floor_ms == pytest.approx(10.0)


def test_compute_bound_point():
    # intensity 100 > ridge 10: attainable 1000 GFLOP/s; 1e12 flops in 2 s = 500
    p = analyze(2000.0, flops=1e12, nbytes=1e10, c=C)
    assert p.bound == "compute"
    assert p.fraction == pytest.approx(0.5)
    assert p.floor_ms == pytest.approx(1000.0)
    assert "compute-bound at 50%" in p.describe()


def test_partial_counts():
    assert analyze(10.0, None, 5e8, C).bound == "memory"
    assert analyze(10.0, None, 5e8, C).fraction == pytest.approx(0.5)
    p = analyze(10.0, None, None, C)
    assert p.bound == "unknown" and p.fraction is None and p.floor_ms is None
    assert floor_ms(1e9, None, C, margin=1.0) == pytest.approx(1.0)
    # the "impossible" floor leaves a margin for kernels that beat torch's own rates
    assert floor_ms(1e9, None, C) == pytest.approx(1.0 / roofline.IMPOSSIBLE_MARGIN)
    with pytest.raises(ValueError):
        analyze(0.0, 1.0, 1.0, C)


def test_ceilings_cached_once(tmp_path, monkeypatch):
    calls = []

    def fake_measure(device, dtype):
        calls.append((device, dtype))
        return Ceilings(device="cpu: x", dtype=dtype, bandwidth_gbs=10.0, gflops=20.0)

    monkeypatch.setattr(roofline, "measure_ceilings", fake_measure)
    path = tmp_path / "r.json"
    a = roofline.ceilings("cpu", "float32", path=path)
    b = roofline.ceilings("cpu", "float32", path=path)
    roofline.ceilings("cpu", "float64", path=path)
    assert a == b and calls == [("cpu", "float32"), ("cpu", "float64")]
    data = json.loads(path.read_text())
    assert len(data) == 2 and not list(tmp_path.glob(".r.json.*"))  # no temp files left


def test_measure_ceilings_real_cpu():
    c = roofline.measure_ceilings("cpu", "float32", reps=2)
    assert c.bandwidth_gbs > 0.1 and c.gflops > 0.1


def test_ceilings_raised_to_a_baselines_achieved_rate(tmp_path, monkeypatch):
    """A trusted baseline faster than the cached ceilings allow raises them
    (and the cache), instead of making every good kernel 'suspicious'."""
    path = tmp_path / "roofline.json"
    low = Ceilings(device="cpu: X", dtype="float32", bandwidth_gbs=10.0, gflops=50.0)
    assert roofline.raise_to_observed(low, "cpu", 1e9, 1e6, 100.0, path=path) is low  # 10 GFLOP/s: fine
    # 1 GFLOP in 10 ms = 100 GFLOP/s > 50: raised; bandwidth (0.1 GB/s) untouched
    high = roofline.raise_to_observed(low, "cpu", 1e9, 1e6, 10.0, path=path)
    assert high.gflops == pytest.approx(100.0) and high.bandwidth_gbs == 10.0
    assert "raised to a baseline" in high.method
    assert floor_ms(1e9, 1e6, high, margin=1.0) == pytest.approx(10.0)
    stored = json.loads(path.read_text())
    (entry,) = stored.values()
    assert entry["gflops"] == pytest.approx(100.0)
    assert roofline.ceilings("cpu", "float32", path=path).gflops == pytest.approx(100.0)


def test_reduced_precision_cpu_compute_ceiling_is_at_least_fp32(tmp_path, monkeypatch):
    """On CPU a fp16 kernel may compute in fp32: its compute ceiling is the better
    of the fp16 and fp32 matmul rates (else a good w4a16 GEMM reads as impossible)."""
    rates = {"float32": 70.0, "float16": 40.0, "bfloat16": 900.0}
    monkeypatch.setattr(roofline, "measure_ceilings", lambda device, dtype: Ceilings(
        device="cpu: x", dtype=dtype, bandwidth_gbs=10.0, gflops=rates[dtype]))
    path = tmp_path / "r.json"
    assert roofline.ceilings("cpu", "float16", path=path).gflops == pytest.approx(70.0)
    assert "float32 rate" in roofline.ceilings("cpu", "float16", path=path).method
    assert roofline.ceilings("cpu", "bfloat16", path=path).gflops == pytest.approx(900.0)
    assert roofline.ceilings("cpu", "float32", path=path).gflops == pytest.approx(70.0)
    stored = json.loads(path.read_text())
    assert {v["dtype"]: v["gflops"] for v in stored.values()}["float16"] == pytest.approx(40.0)


def test_a_baseline_timed_at_the_clamp_does_not_raise_the_ceilings(tmp_path):
    """An eager baseline whose median was the candidate-process timer's clamp
    (1e-6 ms) raised a 2-core CPU's ceilings to 8.4e6 GB/s: every later
    roofline fraction read ~1e-8 and memory-bound ops read compute-bound."""
    path = tmp_path / "roofline.json"
    c = Ceilings(device="cpu: X", dtype="float32", bandwidth_gbs=6.0, gflops=77.0,
                 measured_bandwidth_gbs=6.0, measured_gflops=77.0)
    layernorm_bytes, flops = 8400896.0, 8 * 1024 * 1024.0
    assert roofline.raise_to_observed(c, "cpu", flops, layernorm_bytes, 1e-6, path=path) is c
    assert not path.exists()
    # a believable raise (2x the measured bandwidth) still happens, and keeps what was measured
    raised = roofline.raise_to_observed(c, "cpu", None, 12e6, 1.0, path=path)
    assert raised.bandwidth_gbs == pytest.approx(12.0) and raised.measured_bandwidth_gbs == 6.0
    # softmax-like intensity (~0.6 FLOP/B) is memory-bound on these ceilings
    assert analyze(2.0, flops, layernorm_bytes, raised).bound == "memory"


def test_implausibly_raised_cached_ceilings_are_measured_again(tmp_path, monkeypatch):
    """A cache entry raised far beyond what was measured (or raised before the
    measured rates were kept) is measured again, not believed."""
    monkeypatch.setattr(roofline, "measure_ceilings", lambda device, dtype: Ceilings(
        device="cpu: x", dtype=dtype, bandwidth_gbs=6.0, gflops=77.0,
        measured_bandwidth_gbs=6.0, measured_gflops=77.0))
    path = tmp_path / "r.json"
    key = roofline._key("cpu", "float32")
    poisoned = {"bandwidth_gbs": 8400895.999999998, "device": "cpu: x", "dtype": "float32",
                "gflops": 4194303.9999999995, "measured_at": "2026-11-30T21:00:24+0000", "threads": 2,
                "method": "copy_ + matmul, best of repetitions; raised to a baseline's achieved rate"}
    path.write_text(json.dumps({key: poisoned}))
    c = roofline.ceilings("cpu", "float32", path=path)
    assert (c.bandwidth_gbs, c.gflops) == (6.0, 77.0)
    assert json.loads(path.read_text())[key]["bandwidth_gbs"] == 6.0
    # an entry raised within the limit is kept
    path.write_text(json.dumps({key: {**poisoned, "bandwidth_gbs": 12.0, "gflops": 77.0,
                                      "measured_bandwidth_gbs": 6.0, "measured_gflops": 77.0}}))
    assert roofline.ceilings("cpu", "float32", path=path).bandwidth_gbs == 12.0


def test_a_baseline_under_the_floor_beyond_the_raise_limit_makes_the_timing_doubtful(monkeypatch):
    """The eager baseline timed at the clamp (1e-6 ms): the ceilings stay as
    measured and the timing is marked suspicious (so it is re-timed, and
    untrusted if it stays so), instead of a 1.6e-07x speedup read as a result."""
    from types import SimpleNamespace

    from kstrata.measure import candidate
    from kstrata.measure.retime import doubtful
    from kstrata.measure.timing import TimingConfig
    from kstrata.tasks.loader import resolve_task

    monkeypatch.setattr(roofline, "measure_ceilings", lambda device, dtype: Ceilings(
        device="cpu: x", dtype=dtype, bandwidth_gbs=6.0, gflops=77.0,
        measured_bandwidth_gbs=6.0, measured_gflops=77.0))
    fake = SimpleNamespace(candidate=SimpleNamespace(median=4.8), baseline=SimpleNamespace(median=1e-6),
                           suspicious=[], noisy=False, roofline=None, counters=None, findings=[])
    monkeypatch.setattr(candidate, "measure", lambda *a, **k: fake)
    task = resolve_task("gemv")
    shape = {"M": 1024, "K": 2048}
    m = candidate._measure(task, SimpleNamespace(device="cpu", name="tvm-llvm"), None, None, [], [], shape,
                           TimingConfig(), "eager", True, False)
    assert doubtful(m) and any(s.startswith("baseline median 1e-06 ms is below the roofline floor")
                               for s in m.suspicious)
    assert m.roofline["ceilings"]["bandwidth_gbs"] == 6.0 and m.roofline["candidate"]["bound"] == "memory"
