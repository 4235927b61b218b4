"""Commands kstrata prints for pasting are shell-quoted (newcomer nc16: ``--out "runs/мой прогон"`` then
Ctrl-C printed ``--resume runs/мой прогон``, which a shell splits in two; the end-of-run ``next:`` lines
too)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from typer.testing import CliRunner

from kstrata.cli.main import app

TINY_RELU = Path(__file__).parents[1] / "serve" / "tasks" / "tiny_relu.py"


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


def test_the_resume_hint_after_ctrl_c_works_from_any_folder(tmp_path, monkeypatch):
    """Newcomer nc21: ``kstrata optimize gated_sum.py ...`` interrupted printed the task path as given
    (relative), so the pasted command failed elsewhere with "no such task file"."""
    import kstrata.search.loop as loop

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "optimize", interrupted)
    work = tmp_path / "work"
    work.mkdir()
    (work / "my_relu.py").write_text(TINY_RELU.read_text())
    monkeypatch.chdir(work)
    r = CliRunner().invoke(app, ["optimize", "my_relu.py", "--backend", "tvm-llvm", "--budget", "evals=1",
                                 "--out", "run_here"], env={"COLUMNS": "400"})
    assert r.exit_code == 130, r.output
    resume = [c for c in _commands(r.output) if "--resume" in c]
    assert resume, r.output
    assert resume[0][2] == str(work / "my_relu.py"), r.output
    assert resume[0][resume[0].index("--resume") + 1] == str(work / "run_here"), r.output


def test_the_bench_resume_hint_names_its_folder_absolute(tmp_path, monkeypatch):
    """The same for ``kstrata bench``: its default ``--out bench`` was printed relative."""
    import kstrata.bench.harness as harness
    import kstrata.cli.bench as cli_bench

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    # the CLI binds run_bench at its import: patch the name it calls (and the harness's, for a lazy import)
    monkeypatch.setattr(harness, "run_bench", interrupted)
    monkeypatch.setattr(cli_bench, "run_bench", interrupted)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["bench", "--tasks", "relu", "--backends", "tvm-llvm", "--budget", "evals=1"],
                           env={"COLUMNS": "400"})
    assert r.exit_code == 130, r.output
    words = shlex.split(r.output.split("Continue it with:")[1].split("\n")[1])
    assert words[words.index("--out") + 1] == str(tmp_path / "bench"), words
