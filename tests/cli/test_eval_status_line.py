"""``kstrata eval`` printed nothing between its start and the verdict for
minutes (triton-interp at full scope; the newcomer's report): on a terminal
it keeps a status line with the stage and the time so far; never in
``--json`` output."""

from __future__ import annotations

import io

import kstrata.cli.eval as cli_eval
from kstrata.cli.errors import Console
from kstrata.cli.main import app
from kstrata.verdict import Verdict
from kstrata.verify.result import Evaluation
from typer.testing import CliRunner


class _Pool:
    def close(self) -> None:
        pass


def _fake(seen: list):
    def evaluate(*a, progress=None, **k):
        seen.append(progress)
        if progress is not None:
            progress("verifying: public, then hidden tests (full scope)")
        return Evaluation(Verdict.CORRECT, evidence={"message": "ok"}), None
    return evaluate


def test_a_terminal_gets_the_stage_and_the_time(tmp_path, monkeypatch):
    path = tmp_path / "c.py"
    path.write_text("import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n")
    out = io.StringIO()
    term = Console(file=out, force_terminal=True, width=120)
    seen: list = []
    monkeypatch.setattr(cli_eval, "err_console", term)
    monkeypatch.setattr(cli_eval, "pool_for", lambda b: _Pool())
    monkeypatch.setattr(cli_eval, "evaluate_sources", _fake(seen))
    r = CliRunner().invoke(app, ["eval", "rmsnorm", str(path), "--no-time"])
    assert r.exit_code == 0, r.output
    assert callable(seen[0]) and "verifying: public, then hidden tests (full scope) (running 0 s)" in out.getvalue()
    r = CliRunner().invoke(app, ["eval", "rmsnorm", str(path), "--no-time", "--json"])
    assert seen[1] is None  # --json: no status line


def test_stage_line_is_off_off_a_terminal():
    with cli_eval.stage_line(False) as progress:
        assert progress is None
