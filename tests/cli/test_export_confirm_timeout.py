"""A full-scope verification that times out in ``kstrata export`` is not a verdict
(newcomer nc24, cases /tmp/nc24/cases/interp_export_timeout and
interp_optimize_never_confirms): at load 10 the export of a correct Triton kernel
verified it for 10.5 silent minutes, got ``timeout``, stored it in place of the
screening's ``correct`` for good, and every later export was refused ("is timeout;
export a correct one") with no word of what to do. Now the run keeps the candidate
as screened (the timeout noted), the message names ``--timeout``, a quieter machine
and ``kstrata eval --scope full``, the export prints a status line while it verifies,
and a longer ``--timeout`` exports it. A run that stored such a timeout before is
verified again, not refused. Stand-in: a PyTorch candidate that sleeps 4 s once, at a
sweep shape only the full scope runs, under ``--timeout 2``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.search import Budget, optimize
from kstrata.search.tree import CONFIRMATION_TIMEOUT, CandidateTree
from kstrata.store.records import EvaluationRecord
from kstrata.store.run_store import RunStore
from kstrata.tasks.loader import resolve_task

from test_export_reduced_scope import TASK, NoProposals, ScreenOnly

SLOW_ONCE = '''import time

import torch
import torch.nn as nn

SLEPT = []


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()

    def forward(self, x):
        if x.shape[0] == 127 and not SLEPT:  # a sweep shape: only the full scope runs it
            SLEPT.append(1)
            time.sleep(4)
        return x / torch.clamp(torch.sqrt((x * x).sum(-1, keepdim=True)), min=1e-12)
'''

pytestmark = pytest.mark.slow


def test_a_timed_out_confirmation_is_kept_as_screened_and_a_longer_timeout_exports(tmp_path, monkeypatch):
    from kstrata.cli import progress
    from kstrata.store.secret import run_secret

    (tmp_path / "l2n.py").write_text(TASK)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    res = optimize(resolve_task(str(tmp_path / "l2n.py")), "pytorch", NoProposals(),
                   ScreenOnly(run_secret(run_dir)), "greedy", Budget(evaluations=1), run_dir,
                   initial_sources={"source": SLOW_ONCE}, extra_config={"cli": {"baselines": ["eager"]}})
    digest = res.best.hash
    assert res.best.reduced_scope
    monkeypatch.setattr(progress, "QUIET_S", 1.0)  # a status line while it verifies, without waiting 30 s
    r = CliRunner().invoke(app, ["export", str(run_dir), "--to", str(tmp_path / "pkg"), "--unranked",
                                 "--timeout", "2"])
    said = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert f"verifying {digest[:12]} at the full scope (running" in said  # the heartbeat
    assert "did not finish within the 2 s limit" in said and "A timeout is not a wrong answer" in said
    assert "--timeout 602" in said and "kstrata eval" in said and "--scope full" in said
    assert not (tmp_path / "pkg").exists()
    with RunStore.open(run_dir) as store:
        node = CandidateTree.from_store(store, with_sources=False)[digest]
    assert node.verdict == "correct" and node.reduced_scope  # still exportable, still unconfirmed
    assert node.record.evaluation.evidence[CONFIRMATION_TIMEOUT]["by"] == "kstrata export"
    r = CliRunner().invoke(app, ["show", str(run_dir), digest[:12]])
    shown = " ".join(r.output.split())
    assert "timed out: a time limit, not a wrong answer" in shown
    assert "optimize confirms its best" not in shown  # the judge's note, contradicted on the same line

    # a run from before the fix stored the timeout as the verdict: verified again, not refused
    with RunStore.open(run_dir) as store:
        store.replace_evaluation(digest, EvaluationRecord(
            verdict="timeout", check="wall_clock",
            evidence={"message": "the candidate process did not answer", "confirmed": False,
                      "confirmation": "kstrata export"}))
    r = CliRunner().invoke(app, ["export", str(run_dir), "--to", str(tmp_path / "pkg"), "--unranked",
                                 "--candidate", digest[:12], "--timeout", "120"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "pkg" / "export.json").read_text())["candidate"] == digest
    with RunStore.open(run_dir) as store:
        node = CandidateTree.from_store(store, with_sources=False)[digest]
    assert node.correct and node.reduced_scope is None
