from kstrata.agents.knowledge import hardware_specs, match_device, spec_for_backend


def test_every_spec_names_its_source():
    specs = hardware_specs()
    assert {"nvidia-h200", "nvidia-h100", "nvidia-a100", "nvidia-l4", "amd-mi300x", "x86-avx2", "arm-neon"} <= set(specs)
    for key, spec in specs.items():
        assert spec.get("source"), f"{key} has no source"
        assert spec["kind"] in ("gpu", "cpu")


def test_device_names_as_torch_reports_them():
    assert match_device("NVIDIA H200") == "nvidia-h200"
    assert match_device("NVIDIA H100 80GB HBM3") == "nvidia-h100"
    assert match_device("NVIDIA A100-SXM4-80GB") == "nvidia-a100"
    assert match_device("Some Unknown Accelerator") is None


def test_h200_ridge_point_matches_datasheet():
    h200 = hardware_specs()["nvidia-h200"]
    ridge = h200["peak_tflops"]["bf16_tensor"] * 1e12 / (h200["bandwidth_gbs"] * 1e9)
    assert 200 < ridge < 210  # ~206 FLOP/B in dense bf16


def test_cpu_backend_gets_a_cpu_spec():
    spec = spec_for_backend("tvm-llvm")
    assert spec is not None and spec["kind"] == "cpu"
