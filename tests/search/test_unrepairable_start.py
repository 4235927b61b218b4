"""A search whose proposer cannot repair code (the built-in ones: parameters
and schedules only) stops after an incorrect start instead of spending its
budget on the start's children (newcomer nc11), and says why and how to see
the start's feedback; a proposer that can rewrite code (an LLM) goes on."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask, sources

from kstrata.agents.registry import make_proposer
from kstrata.backends.registry import get_backend
from kstrata.search import Budget, optimize
from kstrata.search.views import result_table
from kstrata.tasks.loader import resolve_task

USER_SOFTMAX = (Path(__file__).parents[1] / "backends" / "data" / "user_softmax_triton.py")


class TunerOnly(FakeProposer):
    repairs = False


def _table_text(run_dir) -> str:
    console = Console(width=400, record=True)
    console.print(result_table(run_dir))
    return console.export_text()


def test_a_tuner_stops_after_an_incorrect_start_and_says_how_to_see_why(tmp_path):
    start = sources(fuse=0, tile=64, order=1)  # tile >= 64 is incorrect (FakeEvaluator)
    ev = FakeEvaluator()
    res = optimize(FakeTask(), FakeBackend(), TunerOnly(), ev, "greedy", Budget(evaluations=10),
                   tmp_path / "run", initial_sources=start)
    assert len(ev.calls) == 1 and res.spent["evaluations"] == 1 and len(res.tree) == 1
    root = res.tree.root
    assert res.stop_reason.startswith(f"the start {root.hash[:12]} is incorrect (allclose)")
    assert f"kstrata show {res.run_dir} {root.hash[:12]}" in res.stop_reason
    assert "--proposer llm" in res.stop_reason
    table = _table_text(res.run_dir)
    assert "the built-in proposer cannot fix it" in table
    assert table.count("kstrata show") == 1  # said once: the note of views._incorrect_start is not repeated


def test_a_proposer_that_can_rewrite_code_goes_on_from_an_incorrect_start(tmp_path):
    start = sources(fuse=0, tile=64, order=1)
    ev = FakeEvaluator()
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), ev, "greedy", Budget(evaluations=6),
                   tmp_path / "run", initial_sources=start)
    assert len(ev.calls) == 6 and "evaluations limit" in res.stop_reason
    assert res.best is not None  # a child (tile 32) is correct


def test_the_builtin_triton_tuner_stops_after_an_incorrect_start(tmp_path):
    task, backend = resolve_task("softmax"), get_backend("triton-interp")
    proposer = make_proposer("builtin", backend=backend)
    assert proposer.repairs is False and make_proposer("builtin", backend=get_backend("tvm-llvm")).repairs is False
    calls = []

    def incorrect(task, backend, srcs):
        calls.append(srcs)
        return {"verdict": "incorrect", "check": "allclose", "feedback": []}, None

    res = optimize(task, backend, proposer, incorrect, "greedy", Budget(evaluations=8), tmp_path / "run",
                   initial_sources={"source": USER_SOFTMAX.read_text()})
    assert len(calls) == 1 and res.stop_reason.startswith("the start ") and len(res.tree) == 1


class TimesOut(FakeEvaluator):
    def evaluate(self, task, backend, srcs):
        super().evaluate(task, backend, srcs)
        return {"verdict": "timeout", "check": "time_limit", "feedback": []}, None


def test_a_start_that_ran_out_of_time_is_not_told_to_be_fixed(tmp_path):
    """queue-model round 2026-12-04: an interpreter's full-scope confirmation of a correct start ran out of
    time on a loaded machine, and the summary said 'fix it'."""
    res = optimize(FakeTask(), FakeBackend(), TunerOnly(), TimesOut(), "greedy", Budget(evaluations=3),
                   tmp_path / "run", initial_sources=sources(fuse=0, tile=64, order=1))
    table = _table_text(res.run_dir)
    assert "ran out of time (timeout" in table and "no result of it was wrong" in table
    assert "fix it (" not in table
