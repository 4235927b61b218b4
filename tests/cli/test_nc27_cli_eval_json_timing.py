"""``kstrata eval --json``'s ``timing.suspicious`` gives advice that applies to an eval (newcomer
nc27: a contended note said "Time it again on a quiet machine (`kstrata retime RUN`)", and an eval
has no run): run the same eval again on a quieter machine, or with a longer --budget-ms. The text
output already said so (tests/cli/test_eval_timing_line.py)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import kstrata.cli.eval as cli_eval
from kstrata.cli.main import app
from kstrata.verdict import Verdict
from kstrata.verify.result import Evaluation

NOTE = ("contended: other processes kept 1.84 of 2 CPUs busy during this timing, which used 2 thread(s); "
        "candidate and baseline were not timed alike. Time it again on a quiet machine (`kstrata retime RUN`) "
        "before believing the speedup")
OWN = "overhead: the call is dominated by launch overhead; time a larger shape (--timing-shape)"
TIMING = {"candidate_ms": 1.0, "baseline_ms": 0.52, "speedup": 0.52, "speedup_ci": [0.4, 0.6], "confidence": 0.95,
          "suspicious": [NOTE, OWN], "method": "paired", "pairs": 40, "shape": {"B": 64, "D": 64}}


class _Pool:
    def close(self) -> None:
        pass


def test_the_json_timing_notes_advise_an_eval_not_a_retime(tmp_path, monkeypatch):
    path = tmp_path / "k.py"
    path.write_text("import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return torch.softmax(x, dim=1)\n")
    monkeypatch.setattr(cli_eval, "pool_for", lambda b: _Pool())
    monkeypatch.setattr(cli_eval, "evaluate_sources", lambda *a, **k: (Evaluation(Verdict.CORRECT), dict(TIMING)))
    r = CliRunner().invoke(app, ["eval", "softmax", str(path), "--json", "--budget-ms", "500"])
    assert r.exit_code == 0, r.output
    notes = json.loads(r.output.splitlines()[-1])["timing"]["suspicious"]
    assert not any("retime" in n or "RUN" in n for n in notes), notes
    assert notes[0].startswith("contended: other processes kept 1.84 of 2 CPUs busy"), notes
    assert "Run kstrata eval again on a quieter machine, or with a longer timing (--budget-ms, now 500)" in notes[0]
    assert notes[1] == OWN  # a note with its own advice keeps it
