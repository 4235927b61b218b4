"""What a prompt for a GPU backend tells the model about its target (queue
round rt58, tvm-cuda): "# Target: tvm-cuda on the target device" with no line
under it. The prompt asked the hardware spec for the backend without a device
name, which only CPU backends answered: no GPU, no thread or shared-memory
limit, on a GPU host too."""

from __future__ import annotations

import pytest
from test_prompt_tvm_targets import _prompt, _target_section

from kstrata.agents.knowledge import spec_for_backend


@pytest.mark.parametrize("backend", ["tvm-cuda", "triton", "tilelang-cuda"])
def test_a_gpu_backend_has_a_gpu_spec_without_a_visible_gpu(backend, monkeypatch):
    monkeypatch.setattr("kstrata.agents.knowledge._visible_gpu", lambda: "")
    spec = spec_for_backend(backend)
    assert spec is not None and spec["kind"] == "gpu" and "sm_90" in spec["arch"], spec
    assert "1024 threads" in spec["limits"] and "no GPU" in spec["device"], spec


def test_a_visible_gpu_is_the_one_described(monkeypatch):
    monkeypatch.setattr("kstrata.agents.knowledge._visible_gpu", lambda: "NVIDIA A100-SXM4-80GB")
    spec = spec_for_backend("tvm-cuda")
    assert spec["name"] == "nvidia-a100" and "device" not in spec


def test_the_tvm_cuda_prompt_states_the_gpu_and_its_limits(monkeypatch):
    monkeypatch.setattr("kstrata.agents.knowledge._visible_gpu", lambda: "")
    user = _prompt("tvm-cuda", "schedule")
    assert "on the target device" not in user
    lines = _target_section(user)
    assert "- kind: gpu" in lines, lines
    limits = [ln for ln in lines if ln.startswith("- limits: ")]
    assert limits and "at most 1024 threads" in limits[0] and "shared memory" in limits[0], lines
