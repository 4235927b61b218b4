from pathlib import Path

import pytest

from kstrata.measure.profilers import ncu, perf
from kstrata.measure.profilers.findings import Finding, findings, from_ncu, from_roofline
from kstrata.measure.roofline import Ceilings, analyze

DATA = Path(__file__).parent / "data"
H200 = Ceilings(device="cuda:0: H200", dtype="float32", bandwidth_gbs=4800.0, gflops=60000.0)


def test_ncu_command_profiles_only_the_nvtx_range():
    cmd = ncu.ncu_command(["python", "-m", "x", "spec.json"], metrics=("a.sum", "b.pct"),
                          launch_count=5)
    assert cmd[:5] == ["ncu", "--csv", "--page", "raw", "--print-units"]
    assert cmd[cmd.index("--metrics") + 1] == "a.sum,b.pct"
    assert cmd[cmd.index("--nvtx-include") + 1] == f"{ncu.NVTX_RANGE}/"
    assert cmd[cmd.index("--launch-count") + 1] == "5"
    assert cmd[-5:] == ["--", "python", "-m", "x", "spec.json"]


def test_parse_raw_csv():
    kernels = ncu.parse_csv((DATA / "ncu_raw.csv").read_text())
    assert [k.name for k in kernels] == ["rmsnorm_kernel", "rmsnorm_kernel", "scale_kernel"]
    k0 = kernels[0]
    assert k0.metrics["dram__bytes_read.sum"] == 134_217_728  # thousands separators parsed
    assert k0.units["gpu__time_duration.sum"] == "nsecond"
    assert k0.metrics["launch__registers_per_thread"] == 32
    assert "Kernel Name" not in k0.metrics and "Block Size" not in k0.metrics


def test_aggregate_sums_and_time_weights():
    kernels = ncu.parse_csv((DATA / "ncu_raw.csv").read_text())
    agg = ncu.aggregate(kernels, calls=2, names=None)
    assert agg["dram__bytes_read.sum"] == pytest.approx((2 * 134_217_728 + 16_777_216) / 2)
    assert agg["gpu__time_duration.sum"] == pytest.approx((52_480 + 52_160 + 20_000) / 2)
    w = (52_480 * 80.3 + 52_160 * 80.1 + 20_000 * 12.0) / (52_480 + 52_160 + 20_000)
    assert agg["sm__warps_active.avg.pct_of_peak_sustained_active"] == pytest.approx(w)
    assert agg["kernels_per_call"] == 1.5


def test_parse_real_h200_output():
    """ncu 2025 on an H200: ``(x * 2).sum()`` on 2^24 fp32, two calls in the
    NVTX range (an elementwise kernel and a reduction per call)."""
    kernels = ncu.parse_csv((DATA / "ncu_raw_h200.csv").read_text())
    assert len(kernels) == 4
    assert kernels[0].name.startswith("void vectorized_elementwise_kernel")
    assert kernels[1].name.startswith("void reduce_kernel")
    agg = ncu.aggregate(kernels, calls=2)
    assert set(agg) <= set(ncu.METRICS) | {"kernels_per_call"}
    assert agg["kernels_per_call"] == 2
    # each kernel reads the 64 MiB tensor once: ~2 x 64 MiB per call
    assert agg["dram__bytes_read.sum"] == pytest.approx(2 * 64 * 2**20, rel=0.01)
    min_bytes = 64 * 2**20 + 4  # read x once, write one float
    ratio = (agg["dram__bytes_read.sum"] + agg["dram__bytes_write.sum"]) / min_bytes
    fs = from_ncu(agg, min_bytes=min_bytes, p=None)
    assert fs[0].level == "graph" and fs[0].text.startswith(f"{ratio:.1f}x more DRAM bytes")
    assert 2.0 < ratio < 3.5  # the intermediate x * 2 goes through DRAM: fuse the two kernels


def test_parse_details_csv():
    (k,) = ncu.parse_csv((DATA / "ncu_details.csv").read_text())
    assert k.name == "matmul_kernel"
    assert k.metrics == {"DRAM Throughput": 18.52, "Duration": 1_234_560.0,
                         "Achieved Occupancy": 21.40}


def test_parse_rejects_non_csv():
    with pytest.raises(ValueError, match="no ncu CSV header"):
        ncu.parse_csv("==ERROR== ERR_NVGPUCTRPERM\n")


def test_profile_without_ncu_is_data(tmp_path):
    r = ncu.profile("pytorch", "rmsnorm", {}, {}, tmp_path, ncu="ncu-does-not-exist")
    assert not r.ok and "not found" in r.reason


def test_perf_csv_parsing():
    text = ("# started on x\n\n"
            "1234567,,instructions,1000000,100.00,,\n"
            "<not supported>,,cycles,0,100.00,,\n"
            "0.51,msec,task-clock,513175,100.00,0.466,CPUs utilized\n")
    assert perf.parse_stat_csv(text) == {"instructions": 1234567.0, "cycles": None,
                                         "task-clock": 0.51}


def test_perf_status_and_count_fall_back_gracefully():
    ok, reason = perf.status()
    r = perf.count(lambda: sum(range(1000)), calls=3)
    assert r.ok == ok
    if not ok:
        assert reason and r.reason == reason and r.per_call == {}
    else:
        assert r.per_call.get("instructions", 0) > 0
    assert perf.status("perf-does-not-exist") == (False, "perf not found on PATH")


def test_finding_validates_level():
    with pytest.raises(ValueError):
        Finding("x", "kernel", 0.5)
    with pytest.raises(ValueError):
        Finding("x", "graph", 1.5)


def test_memory_bound_with_excess_traffic_suggests_fusion():
    # rmsnorm B=D=4096 fp32: 128 MiB minimum traffic; measured 3.1x that
    min_bytes = 4 * (2 * 4096 * 4096 + 4096)
    p = analyze(0.2, flops=4 * 4096 * 4096, nbytes=min_bytes, c=H200)
    metrics = {"dram__bytes_read.sum": 2.1 * min_bytes, "dram__bytes_write.sum": 1.0 * min_bytes,
               "dram__throughput.avg.pct_of_peak_sustained_elapsed": 38.0}
    fs = findings(p, H200, min_bytes=min_bytes, ncu=metrics)
    top = fs[0]
    assert top.level == "graph"
    assert top.text.startswith("memory-bound at 38% of peak bandwidth; 3.1x more DRAM bytes")
    assert "fusing" in top.text and top.metrics["ratio"] == pytest.approx(3.1)
    # the roofline's own bandwidth sentence is not repeated
    assert sum(f.text.startswith("memory-bound at") for f in fs) == 1


def test_ncu_occupancy_coalescing_spills_and_tensor_cores():
    p = analyze(10.0, flops=4e11, nbytes=1e8, c=H200)  # compute-bound, 67% ... fraction < 1
    fs = from_ncu({"sm__warps_active.avg.pct_of_peak_sustained_active": 12.0,
                   "launch__registers_per_thread": 255,
                   "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 3200.0,
                   "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 100.0,
                   "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum": 65536.0,
                   "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": 1.0},
                  None, p, dtype="float16")
    by_start = {f.text.split()[0]: f.level for f in fs}
    assert by_start == {"achieved": "schedule", "uncoalesced": "source", "register": "schedule",
                        "tensor": "source"}
    assert "32.0 sectors per request" in fs[1].text


def test_roofline_findings_levels():
    c = Ceilings(device="cpu", dtype="float32", bandwidth_gbs=40.0, gflops=200.0)
    low_mem = from_roofline(analyze(10.0, None, 1e8, c), c)  # 10 GB/s = 25%
    assert low_mem[0].level == "schedule" and "25% of peak bandwidth" in low_mem[0].text
    near = from_roofline(analyze(2.6, None, 1e8, c), c)  # 96%
    assert near[0].level == "graph"
    above = from_roofline(analyze(1.0, None, 1e8, c), c)  # 250%: impossible
    assert above[0].level == "source" and "suspicious" in above[0].text
    slow_compute = from_roofline(analyze(100.0, 2e9, 1e6, c), c)  # 20 GFLOP/s = 10%
    assert slow_compute[0].level == "schedule" and "compute-bound at 10%" in slow_compute[0].text
    assert from_roofline(analyze(1.0, None, None, c), c) == []
