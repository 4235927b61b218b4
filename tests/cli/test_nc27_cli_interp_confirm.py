"""On triton-interp, what optimize says before a run and what ``eval --scope small`` says of the
full-scope confirmation match what the run does (newcomer nc27: a run from ``--initial`` was warned
of "the full-scope verification ... that confirms the run's best (each would-be best ...)", tens of
minutes, and then ended "verified by the search's screening only", while eval's note said
"(optimize confirms its best at the full scope)"). Nothing is timed there, so no would-be best
arises during the search: a best the search made is confirmed once, at the end, and a correct
``--initial`` start stays the best and is left to ``kstrata export`` (loop.start_left_to_export)."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

import kstrata
from kstrata.backends.registry import get_backend
from kstrata.cli import eval as eval_cli
from kstrata.cli import optimize as optimize_cli
from kstrata.search.loop import start_left_to_export
from kstrata.verdict import Verdict
from kstrata.verify import interp_cost
from kstrata.verify.result import Evaluation


def _notes(monkeypatch, start) -> str:
    monkeypatch.setattr(interp_cost, "WARN_S", 0.0)  # warn whatever this machine's speed
    buf = io.StringIO()
    monkeypatch.setattr(optimize_cli, "err_console", Console(file=buf, width=4000))
    optimize_cli._interpreter_notes(kstrata.load_task("softmax"), get_backend("triton-interp"),
                                    SimpleNamespace(scope="small", confirm_scope="full"), start)
    return " ".join(buf.getvalue().split())


def test_the_start_warning_says_what_an_interpreter_run_confirms(monkeypatch):
    b, task = get_backend("triton-interp"), kstrata.load_task("softmax")
    shipped = b.initial_sources(task)
    given = {"source": shipped["source"] + "\n# the user's own start\n"}
    assert start_left_to_export(b, task, given) and not start_left_to_export(b, task, shipped)
    text = _notes(monkeypatch, given)
    assert "each would-be best" not in text, text
    assert ("a correct --initial start stays the best, its full-scope check left to `kstrata export` or "
            "`kstrata eval --scope full`") in text, text
    text = _notes(monkeypatch, shipped)
    assert "that confirms the run's best (once, at the end of the run: nothing is timed on triton-interp" in text
    assert "each would-be best" not in text, text


def test_evals_small_scope_note_on_an_interpreter_says_the_start_is_left_to_export():
    note = "small: 3 of the task's 9 sweep shapes were not tested (B=5); --scope full tests them" \
           " (optimize confirms its best at the full scope)"
    ev = Evaluation(Verdict.CORRECT, evidence={"scope": note})
    eval_cli.untimed_scope_note(ev, get_backend("triton-interp"))
    assert ev.evidence["scope"].startswith("small: 3 of the task's 9 sweep shapes") and "(B=5)" in ev.evidence["scope"]
    assert "not a best that is the run's --initial start: `kstrata export` verifies that one there" \
        in ev.evidence["scope"], ev.evidence
    timed = Evaluation(Verdict.CORRECT, evidence={"scope": note})
    eval_cli.untimed_scope_note(timed, get_backend("pytorch"))
    assert timed.evidence["scope"] == note  # true where bests are timed
