"""A candidate's kernel cache is its own per task, and ``--show-hidden`` tells a
hidden failure in full (newcomer nc15): the same file verified against a second
task started from the archive its verification against the first task wrote
after hidden tests, so its public failure on the second task was withheld with
"an earlier verification of the same candidate passed the same public tests"
(false there); and ``--show-hidden`` named the failing hidden shape but
withheld what failed there ("did not load at a hidden test's shape (an
exception)")."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")

RAISES_WHEN_D_MOD_4_IS_2 = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        if x.shape[-1] % 4 == 2:
            raise ValueError("kernel-own-words-7: tail tile of " + str(x.shape[-1] % 4))
        return torch.relu(x)
'''


def test_a_second_task_does_not_start_from_the_first_tasks_archive():
    from kstrata.backends.registry import get_backend
    from kstrata.verify.runner import candidate_process

    b, sources = get_backend("pytorch"), {"source": "the same file"}
    relu, sigmoid = resolve_task("relu"), resolve_task("sigmoid")
    key = candidate_process(relu, b, False, sources).kernel_cache
    assert key and key == candidate_process(relu, b, False, sources).kernel_cache
    assert key != candidate_process(sigmoid, b, False, sources).kernel_cache
    assert key != candidate_process(relu, b, False, sources, role="time").kernel_cache


def test_show_hidden_tells_what_failed_at_the_hidden_test(tmp_path):
    cand = tmp_path / "relu_raises.py"
    cand.write_text(RAISES_WHEN_D_MOD_4_IS_2)
    args = ["eval", "relu", str(cand), "--backend", "pytorch", "--scope", "small", "--no-time", "--json"]
    shown = CliRunner().invoke(app, [*args, "--show-hidden"], env={"COLUMNS": "300"})
    ev = json.loads(shown.output[shown.output.index("{"):])
    assert ev["evidence"]["stage"] == "hidden" and ev["evidence"]["hidden_test"]["shape"]["D"] % 4 == 2
    assert "kernel-own-words-7" in json.dumps(ev), ev["evidence"]
    hidden = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    assert "kernel-own-words-7" not in hidden.output and '"hidden_test":' not in hidden.output
