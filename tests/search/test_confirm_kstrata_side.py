"""A full-scope confirmation that fails on kstrata's side (the machine's OOM
killer ended the candidate's process before its own limit, or its sandbox did
not start) is no evidence about the candidate (newcomer nc28: the quick start's
final confirmation read the machine's OOM kill as "the task's reference ran out
of memory in the judge", and the run ended with exit 2, no table, no best/ and no
resume command). The judge lets such an error through as itself, and the run
keeps the candidate as screened with the failure noted, as a timed-out
confirmation is kept."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.sandbox.policy import HostOutOfMemory, SandboxStartError
from kstrata.search import Budget, optimize
from kstrata.search.loop import KSTRATA_SIDE, confirm_bests
from kstrata.search.tree import CONFIRMATION_TIMEOUT, CandidateTree
from kstrata.store.run_store import RunStore
from kstrata.tasks.loader import resolve_task

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_fakes import NoProposals, ScreenOnly  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))

from test_export_reduced_scope import TASK  # noqa: E402

HONEST = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()

    def forward(self, x):
        return x / torch.clamp(torch.sqrt((x * x).sum(-1, keepdim=True)), min=1e-12)
'''


@pytest.mark.parametrize("error", [HostOutOfMemory, SandboxStartError])
def test_a_confirmation_failing_on_kstratas_side_keeps_the_screened_best(tmp_path, error):
    from kstrata.store.secret import run_secret

    (tmp_path / "l2n.py").write_text(TASK)
    task, run_dir = resolve_task(str(tmp_path / "l2n.py")), tmp_path / "run"
    run_dir.mkdir()
    res = optimize(task, "pytorch", NoProposals(), ScreenOnly(run_secret(run_dir)), "greedy",
                   Budget(evaluations=1), run_dir, initial_sources={"source": HONEST},
                   extra_config={"cli": {"baselines": ["eager"]}})
    digest = res.best.hash
    calls = []

    def hook(task, backend, sources):
        calls.append(1)
        raise error("the machine ran out of memory and the kernel's OOM killer ended the candidate's process")

    with RunStore.open(run_dir) as store:
        def reload():
            return CandidateTree.from_store(store, with_sources=False)

        tree = confirm_bests(store, reload(), reload, task, "pytorch", lambda best: hook, "kstrata optimize")
    node = tree[digest]
    assert len(calls) == 1  # not handed on to another candidate, not retried
    assert node.verdict == "correct" and node.reduced_scope
    note = node.record.evaluation.evidence[CONFIRMATION_TIMEOUT]
    assert note["check"] == "evaluator_exception" and "OOM killer" in note["message"]
    shown = " ".join(CliRunner().invoke(app, ["show", str(run_dir), digest[:12]]).output.split())
    assert "could not finish on kstrata's side" in shown and "not a wrong answer" in shown
    assert KSTRATA_SIDE == "kstrata_side"


def test_the_judge_lets_the_machines_oom_kill_through_as_itself(tmp_path, monkeypatch):
    from kstrata.verify import runner

    (tmp_path / "l2n.py").write_text(TASK)

    def oom(ctx):
        raise HostOutOfMemory("the machine ran out of memory and the kernel's OOM killer ended the candidate's "
                              "process on a hidden test before its own limit was reached")

    monkeypatch.setattr(runner, "_static_stage", oom)
    with pytest.raises(HostOutOfMemory):  # before: ReferenceFailure "the task's reference ran out of memory"
        runner.run_protocol(resolve_task(str(tmp_path / "l2n.py")), "pytorch", {"source": HONEST}, "s",
                            scope="small")  # in this process, as the judge's worker runs it
