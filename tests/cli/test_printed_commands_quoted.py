"""Commands kstrata prints for pasting are shell-quoted (newcomer nc16: ``--out "runs/мой прогон"`` then
Ctrl-C printed ``--resume runs/мой прогон``, which a shell splits in two; the end-of-run ``next:`` lines
too)."""

from __future__ import annotations

import json
import shlex

from typer.testing import CliRunner

from kstrata.cli.main import app


def _commands(text: str) -> list[list[str]]:
    """Every printed ``kstrata ...`` command (up to a backquote or the line's end), split as a shell would."""
    out = []
    for line in text.splitlines():
        for part in line.split("kstrata ")[1:]:
            if not part.startswith(("optimize ", "retime ", "export ", "show ", "tree ", "report ", "eval ")):
                continue  # prose that names kstrata
            cmd = part.split("`")[0].split("   (")[0].split(" (")[0].strip().rstrip(")")
            out.append(shlex.split("kstrata " + cmd))
    return out


def test_the_resume_hint_after_ctrl_c_quotes_the_run_folder(tmp_path, monkeypatch):
    import kstrata.search.loop as loop

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "optimize", interrupted)
    out = tmp_path / "мой прогон"
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "triton-interp", "--budget", "evals=1",
                                 "--out", str(out)], env={"COLUMNS": "400"})
    assert r.exit_code == 130, r.output
    resume = [c for c in _commands(r.output) if "--resume" in c]
    assert resume and resume[0][resume[0].index("--resume") + 1] == str(out), r.output


def test_the_next_lines_quote_the_run_folder(tmp_path):
    from kstrata.search.views import next_steps

    run = tmp_path / "it's a run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({"best": {"hash": "0" * 64, "speedups": {"eager": 1.5}}}))
    text = next_steps(run)
    cmds = _commands(text)
    assert cmds and all(str(run) in c for c in cmds), text
