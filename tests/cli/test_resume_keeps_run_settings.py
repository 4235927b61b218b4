"""``--resume`` goes on with the run's own proposer, LLM and baselines (newcomer nc16: the command printed
after interrupting an LLM run left out ``--proposer llm --llm queue:...``, and a resume without them went on
with the built-in proposer and eager alone)."""

from __future__ import annotations

import shlex

from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.store.run_store import RunStore


def test_a_resume_restores_the_runs_proposer_llm_and_baselines_and_says_them(tmp_path, monkeypatch):
    import kstrata.search.loop as loop

    queue = tmp_path / "queue"
    run = tmp_path / "llm run"
    RunStore.create(run, {"cli": {"proposer": "llm", "llm": f"queue:{queue}", "baselines": ["eager", "compile"]}}
                    ).close()
    seen = {}

    def interrupted(task, backend, prop, evaluator, **kwargs):
        seen.update(proposer=type(prop).__name__, baselines=tuple(evaluator.baselines))
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "optimize", interrupted)
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "triton-interp", "--resume", str(run)],
                           env={"COLUMNS": "400"})
    assert r.exit_code == 130, r.output
    assert "llm" in seen["proposer"].lower(), seen
    assert seen["baselines"] == ("eager", "compile")
    hint = next(ln for ln in r.output.splitlines() if "--resume" in ln)
    words = shlex.split(hint.strip())
    assert words[words.index("--proposer") + 1] == "llm" and words[words.index("--llm") + 1] == f"queue:{queue}"
    assert words[words.index("--resume") + 1] == str(run)


def test_options_given_on_resume_still_win(tmp_path, monkeypatch):
    import kstrata.search.loop as loop

    run = tmp_path / "run"
    RunStore.create(run, {"cli": {"proposer": "llm", "llm": "queue:/nowhere", "baselines": ["eager"]}}).close()
    seen = {}

    def interrupted(task, backend, prop, evaluator, **kwargs):
        seen.update(proposer=type(prop).__name__, baselines=tuple(evaluator.baselines))
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "optimize", interrupted)
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "triton-interp", "--resume", str(run),
                                 "--proposer", "builtin", "--baselines", "compile"])
    assert r.exit_code == 130, r.output
    assert "llm" not in seen["proposer"].lower() and seen["baselines"] == ("compile",), seen


def test_a_full_disk_names_the_same_resume_command_as_an_interrupt(tmp_path, monkeypatch):
    import errno

    import kstrata.search.loop as loop

    queue = tmp_path / "queue"
    run = tmp_path / "llm run"
    RunStore.create(run, {"cli": {"proposer": "llm", "llm": f"queue:{queue}", "baselines": ["eager"]}}).close()

    def full(task, backend, prop, evaluator, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(run / "candidates" / "ab" / "graph.py"))

    monkeypatch.setattr(loop, "optimize", full)
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "triton-interp", "--resume", str(run)],
                           env={"COLUMNS": "400"})
    assert r.exit_code == 1, r.output
    text = " ".join(r.output.split())  # the error line may be wrapped
    hint = text.split("continue the run (it is kept) with: ", 1)[1]
    words = shlex.split(hint)
    assert words[:2] == ["kstrata", "optimize"], words
    assert words[words.index("--proposer") + 1] == "llm" and words[words.index("--llm") + 1] == f"queue:{queue}"
    assert words[words.index("--resume") + 1] == str(run)
