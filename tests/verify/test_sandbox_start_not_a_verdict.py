"""A candidate process's sandbox that does not start is kstrata's failure, never the
candidate's verdict: no candidate code runs before its ``load`` request (queue round
rt82: with the sandbox broken the agent read "the sandbox's zygote exited" as its own
candidate's runtime_error)."""

from __future__ import annotations

import pytest

from kstrata.execute.pool import CallResult
from kstrata.sandbox import CandidateDied
from kstrata.sandbox.policy import SandboxStartError, SandboxUnavailable
from kstrata.tasks.loader import resolve_task
from kstrata.verify import api, runner

RELU = "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n" \
       "        return torch.relu(x)\n"


@pytest.mark.parametrize("cause", ["exit", "timeout"])
def test_a_process_start_that_fails_raises_the_judges_error_not_a_verdict(monkeypatch, cause):
    def broken(spec, timeout_s=300.0):
        raise CandidateDied(cause, "the sandbox's zygote exited: ImportError: libtorch_cpu.so")

    monkeypatch.setattr(runner, "fresh", broken)
    task = resolve_task("relu")
    with pytest.raises(SandboxStartError) as e:
        runner.run_protocol(task, "pytorch", {"source": RELU}, "s3cr3t", scope="small", timeout_s=60)
    assert "kstrata's side" in str(e.value) and "zygote exited" in str(e.value)
    assert isinstance(e.value, SandboxUnavailable)  # kstrata eval exits 2 with the message


def test_the_workers_report_of_it_is_raised_again_by_verify_candidate():
    r = CallResult(ok=False, kind="exception", error="SandboxStartError: the candidate's sandbox did not start")
    with pytest.raises(SandboxStartError, match="did not start"):
        api._from_call(r, resolve_task("relu"), "pytorch", "strict", 60.0)
