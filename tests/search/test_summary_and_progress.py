"""What a newcomer reads during and after a run: the progress line names only a
ranked best (never a candidate whose timing was not believed), the end-of-run
table folds the unranked candidates into one line with what to do, says where
the speedup was timed, and summary.json records that shape."""

from __future__ import annotations

import json

from rich.console import Console
from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask

from kstrata.cli.optimize import progress_best
from kstrata.search import Budget, SearchSettings, optimize
from kstrata.search.tree import UNTRUSTED_PREFIX, CandidateTree
from kstrata.search.views import result_table
from kstrata.store.run_store import RunStore

SHAPE = {"B": 1024, "D": 1024}


def _text(renderable) -> str:
    console = Console(width=400, record=True)
    console.print(renderable)
    return console.export_text()


class Untrusted(FakeEvaluator):
    """Candidates at or above ``limit`` read an untrusted timing."""

    def __init__(self, limit: float):
        super().__init__()
        self.limit = limit

    def evaluate(self, task, backend, srcs):
        ev, m = super().evaluate(task, backend, srcs)
        if m is not None and m["speedups"]["eager"]["value"] >= self.limit:
            m["findings"] = [f"{UNTRUSTED_PREFIX} the timing stayed noisy"]
        return ev, m


def _run(tmp_path, limit: float):
    return optimize(FakeTask(), FakeBackend(), FakeProposer(), Untrusted(limit), "greedy", Budget(evaluations=8),
                    tmp_path / "run", settings=SearchSettings(final_contenders=0),
                    extra_config={"cli": {"timing_shape": SHAPE}})


def _tree(run_dir) -> CandidateTree:
    with RunStore.open(run_dir) as store:
        return CandidateTree.from_store(store, with_sources=False)


def test_progress_names_the_best_ranked_candidate_never_an_untrusted_one(tmp_path):
    res = _run(tmp_path, limit=0.5)
    tree = _tree(res.run_dir)
    trusted = [n for n in tree if n.correct and n.timing_trusted]
    untrusted = [n for n in tree if n.correct and not n.timing_trusted]
    assert trusted and untrusted and max(n.speedup for n in untrusted) > max(n.speedup for n in trusted)
    best = max(trusted, key=lambda n: n.speedup)
    assert progress_best(tree) == f"best {best.speedup:.2f}x ({best.hash[:8]}, {best.level or 'initial'})"


class Screened(FakeEvaluator):
    """Every correct candidate verified at a reduced scope only (``--scope small``
    with the confirmation at the run's end, not reached yet)."""

    def evaluate(self, task, backend, srcs):
        ev, m = super().evaluate(task, backend, srcs)
        if ev["verdict"] == "correct":
            ev["evidence"] = {"scope": "small: 3 of 9 sweep shapes"}
        return ev, m


def test_progress_says_a_best_verified_at_the_screening_scope_only_is_screened_only(tmp_path):
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), Screened(), "greedy", Budget(evaluations=4),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0))
    tree = _tree(res.run_dir)
    best = tree.best_correct()
    assert best is not None and best.reduced_scope
    assert progress_best(tree) == f"best {best.speedup:.2f}x ({best.hash[:8]}, {best.level or 'initial'}, " \
                                  "screened only)"


def test_no_ranked_candidate_is_said_plainly_in_progress_and_summary(tmp_path):
    res = _run(tmp_path, limit=0.0)  # every timing untrusted, the start's included
    tree = _tree(res.run_dir)
    n = sum(1 for x in tree if x.correct)
    assert progress_best(tree) == f"no ranked candidate yet ({n} correct, timing not trusted yet)"
    assert progress_best(None) == "no correct candidate yet"
    table = _text(result_table(res.run_dir))
    assert "none ranked: no speedup is claimed" in table and "speedup vs" not in table
    assert f"{n} correct candidates not ranked" in table and f"kstrata retime {res.run_dir}" in table


def test_summary_records_and_the_table_shows_the_timing_shape(tmp_path):
    res = _run(tmp_path, limit=0.5)
    summary = json.loads((res.run_dir / "summary.json").read_text())
    assert summary["timing_shape"] == SHAPE
    table = _text(result_table(res.run_dir, nominal={"B": 4096, "D": 4096}))
    assert "timed at" in table and "B=1024, D=1024 (not the nominal B=4096, D=4096; see --timing-shape)" in table
    assert table.count("unranked") == 1 and "wins from slower nodes" not in table
    assert "(95% interval, first timing)" in table  # which timing of the run the reading is


def test_a_stopped_runs_tree_and_report_say_not_evaluated_and_define_their_words(tmp_path):
    from kstrata.report.html import build_context
    from kstrata.bench.results import load_results
    from kstrata.search.views import run_tree

    from kstrata.agents.base import Proposal

    class ThreeAtOnce:
        name = "three"

        def propose(self, task, candidate, feedback, level, *, context):
            return [Proposal.edit(candidate.sources, "schedule", f"tile={t}\norder=0\n", "r") for t in (2, 4, 8)]

    res = optimize(FakeTask(), FakeBackend(), ThreeAtOnce(), Untrusted(0.5), "greedy", Budget(evaluations=2),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0, lookahead_expansions=0))
    tree = _tree(res.run_dir)
    assert len(tree.pending()) == 2  # proposed, never evaluated: the budget ran out
    text = " ".join(_text(run_tree(res.run_dir)).split())
    assert "not evaluated (the run stopped first)" in text and " pending" not in text
    root = tree.root.hash[:8]  # the reason beside a child names the candidate that was asked, its parent
    assert f"levels take turns: graph edits asked of {root} for the first time" in text or \
        f"levels take turns: schedule edits asked of {root} for the first time" in text
    assert "round-robin:" not in text and "slower at creation" not in text
    assert "unranked (untrusted timing): correct, but its timing stayed too noisy to rank" in text  # the legend
    from kstrata.search.views import candidate_view

    shown = " ".join(_text(candidate_view(res.run_dir, tree.pending()[0].hash[:10])).split())
    assert "verdict not evaluated (the run stopped first)" in shown
    ctx = build_context(load_results(res.run_dir, count_initial=True, with_sources=True))
    (details,) = [d for d in ctx["details_json"].split('"verdict":')[1:] if d.startswith('"not evaluated')][:1]
    assert details.startswith('"not evaluated (the run stopped first)"')


def test_show_explains_a_symbolic_graph_with_a_static_build():
    from kstrata.search.views import graph_header_note

    note = graph_header_note("# kstrata-tvm graph\n# inputs: 1\n# shape: symbolic\n# build: static\n")
    assert note.startswith("# shape: symbolic, # build: static: the graph text is written for any shape")
    assert "compiled separately for each shape" in note and "runs only at the shape it was built for" in note
    assert graph_header_note("fuse=0\n") == ""


def test_a_best_not_faster_than_eager_is_said_plainly(tmp_path):
    res = _run(tmp_path, limit=0.5)  # trusted: below 0.5x; the faster readings are untrusted
    table = _text(result_table(res.run_dir))
    assert "the best ranked candidate is not faster than eager" in table


def test_retime_prints_one_row_per_candidate_and_the_reason_once(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from kstrata.cli import retime as R
    from kstrata.cli.main import app

    res = _run(tmp_path, limit=0.5)
    why = f"{UNTRUSTED_PREFIX} the timing stayed noisy in the final round"
    rows = [{"hash": h * 64, "before": 1.0, "before_was": "first timing", "after": 2.0, "trusted": False, "why": why}
            for h in "ab"]
    monkeypatch.setattr(R, "retime_run", lambda run_dir, candidate=None, progress=None: rows)
    from types import SimpleNamespace

    task = SimpleNamespace(nominal_shape={"B": 4096, "D": 4096})
    monkeypatch.setattr(R, "open_run", lambda run_dir: R.RunInfo(res.run_dir, task, FakeBackend(), SHAPE,
                                                                ("eager",), "budget"))
    r = CliRunner().invoke(app, ["retime", str(res.run_dir)], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    # its table is optimize's: the timed shape is said not to be the nominal one (newcomer nc18 F12)
    flat = " ".join(r.output.replace("│", " ").split())  # a cell may wrap: its lines joined
    assert "B=1024, D=1024 (not the nominal B=4096, D=4096; see --timing-shape)" in flat, r.output
    # each reading says which timing it is (the newcomer saw 1.04x -> 2.1x, then 1.32x from eval, unexplained)
    assert "aaaaaaaaaaaa: 1x (first timing) -> 2x (re-timed now), still unranked" in r.output
    assert "bbbbbbbbbbbb: 1x (first timing) -> 2x (re-timed now)" in r.output
    assert " ".join(r.output.split()).count("the timing stayed noisy in the final round") == 1


def test_a_run_that_timed_nothing_says_so_and_names_no_timing_shape(tmp_path):
    """On an interpreter backend nothing is timed: the summary said 'timed at
    B=1024, D=1024' and 'the best's timing was not trusted' all the same."""

    class Untimed(FakeEvaluator):
        def evaluate(self, task, backend, srcs):
            ev, _m = super().evaluate(task, backend, srcs)
            return ev, None

    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), Untimed(), "greedy", Budget(evaluations=4),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0),
                   extra_config={"cli": {"timing_shape": SHAPE}})
    assert json.loads((res.run_dir / "summary.json").read_text())["timed"] is False
    table = _text(result_table(res.run_dir))
    assert "none ranked: nothing was timed in this run (the backend checks correctness only" in table
    assert "timed at" not in table and "was not trusted" not in table
    timed = _run(tmp_path / "b", limit=0.5)
    assert json.loads((timed.run_dir / "summary.json").read_text())["timed"] is True


def test_the_tree_shows_declines_and_its_legend_names_only_the_levels_the_run_edits():
    """`kstrata tree` did not show declines (the prompt says they are kept on the
    tree), and its legend spoke of graph and schedule edits on triton-interp."""
    from kstrata.search.views import _levels, legend
    from kstrata.store.records import CandidateRecord, EvaluationRecord, ExpansionRecord

    root = CandidateRecord(hash="a" * 64, sources={}, level=None, role="initial", proposer="initial",
                           status="evaluated", backend="triton-interp")
    root.evaluation = EvaluationRecord(verdict="correct")
    child = CandidateRecord(hash="b" * 64, sources={}, level="source", role="single-agent", proposer="llm",
                            parents=("a" * 64,), status="evaluated", backend="triton-interp", expansion_id=1)
    child.evaluation = EvaluationRecord(verdict="correct")
    record = {"level": "source", "role": "single", "diagnosis": "the kernel already reads each row once",
              "requests": []}
    declined = ExpansionRecord(candidate="b" * 64, level="source", proposer="llm", id=2,
                               error="Declined: " + json.dumps(record) + "\nTraceback ...")
    tree = CandidateTree([root, child], [ExpansionRecord(candidate="a" * 64, level="source", proposer="llm", id=1),
                                         declined])
    assert [d["diagnosis"] for d in tree.declines()] == ["the kernel already reads each row once"]
    text = _text(tree.render("run"))
    assert "declined at source (single): the kernel already reads each row once" in text
    words = _text(legend(_levels(tree)))
    assert "level edited (source; initial: the start)" in words and "declined at LEVEL" in words
    assert "graph change" not in words and "levels take turns" not in words
    assert "levels take turns" in _text(legend(None))


def test_unranked_line_says_other_processes_held_the_cpus():
    """A timing the judge marked contended is named as such, with the CPUs others
    held, not as 'noisy' (a newcomer on a busy machine must see why)."""
    from kstrata.search.tree import UNTRUSTED_PREFIX
    from kstrata.search.views import unranked_line

    def why(held):
        return (f"{UNTRUSTED_PREFIX} contended: other processes kept {held} of 2 CPUs busy during this timing, "
                "which used 2 thread(s); ... after 2 re-timing(s)")

    one = unranked_line([{"hash": "a", "speedup": 1.7, "why": why("1.12")}], "RUN")
    assert "other processes kept 1.1 of the 2 CPUs busy while it was timed" in one
    assert "read 1.7x" in one and "kstrata retime RUN" in one and "noisy" not in one
    mixed = unranked_line([{"hash": "a", "speedup": 1.7, "why": why("0.9")},
                           {"hash": "b", "speedup": 0.8, "why": why("1.4")},
                           {"hash": "c", "speedup": 1.1, "why": f"{UNTRUSTED_PREFIX} the timing stayed noisy"}], "RUN")
    assert "3 correct candidates not ranked, read 0.8x to 1.7x" in mixed
    assert "kept 0.9-1.4 of the 2 CPUs busy while 2 of them were timed; the other timings stayed noisy" in mixed
    plain = unranked_line([{"hash": "c", "speedup": None, "why": f"{UNTRUSTED_PREFIX} the timing stayed noisy"}], "R")
    assert "timing stayed noisy (a busy machine)" in plain
