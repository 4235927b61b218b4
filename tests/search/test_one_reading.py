"""One reading per candidate: the tree, ``show``, the end-of-run table, the
summary and the HTML report take a candidate's speedup from one function
(:func:`kstrata.search.views.reading`: the re-timed reading where one exists)
and say which timing it is; "slower than its parent" compares the readings
shown (the newcomer saw ``0b4cd71b ... 2.99x ... (slower than its parent)``
under a parent reading 1.07x, the flag left from the first timings)."""

from __future__ import annotations

import json

from rich.console import Console
from search_fakes import FakeBackend, FakeTask, parse

from kstrata.cli import retime as R
from kstrata.cli.optimize import progress_best
from kstrata.report.html import build_context
from kstrata.bench.results import load_results
from kstrata.search import Budget, SearchSettings, optimize
from kstrata.search.tree import CandidateTree
from kstrata.search.views import candidate_view, reading, result_table, run_tree
from kstrata.store.run_store import RunStore

FIRST = {1: 1.0, 2: 0.5}  # tile -> speedup at the search's first timing: the child reads slower
RETIMED = 2.0  # the child's reading in the final, longer round


class Evaluator:
    def evaluate(self, task, backend, srcs):
        s = FIRST[parse(srcs)["tile"]]
        return {"verdict": "correct"}, {"median_ms": 1 / s, "speedups": {"eager": {"value": s, "ci": [s * .9, s * 1.1]}},
                                        "findings": []}

    def final_round(self, task, backend, srcs):  # as VerifyMeasureEvaluator.final_round marks its measurement
        return {"median_ms": 1 / RETIMED, "speedups": {"eager": {"value": RETIMED, "ci": [1.8, 2.2]}},
                "findings": [], "raw": {"final_round": True}}


class Proposer:
    name = "fixed"

    def propose(self, task, candidate, feedback, level, *, context):
        from kstrata.agents.base import Proposal

        if context.step:
            return []
        return [Proposal.edit(candidate.sources, "schedule", "tile=2\norder=0\n", "r")]


def _text(renderable, width: int = 400) -> str:
    console = Console(width=width, record=True)
    console.print(renderable, crop=False)
    return console.export_text()


def _line(text: str, digest: str) -> str:
    return next(ln for ln in text.splitlines() if digest[:8] in ln and "──" in ln)


def test_every_view_shows_the_retimed_reading_and_says_which_it_is(tmp_path, monkeypatch):
    res = optimize(FakeTask(), FakeBackend(), Proposer(), Evaluator(), "greedy", Budget(evaluations=2),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0, lookahead_expansions=0))
    with RunStore.open(res.run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
    root, child = tree.root, next(n for n in tree if n.parents)
    assert child.slower_at_creation
    line = _line(_text(run_tree(res.run_dir)), child.hash)
    assert "0.5x (slower) (slower than its parent)" in line and "re-timed" not in line

    stop = json.loads((res.run_dir / "summary.json").read_text())["stop_reason"]
    monkeypatch.setattr(R, "open_run", lambda run_dir: R.RunInfo(res.run_dir, FakeTask(), FakeBackend(), None,
                                                                ("eager",), stop))
    (row,) = R.retime_run(res.run_dir, child.hash[:10], evaluator=Evaluator())
    assert row["before"] == 0.5 and row["after"] == RETIMED and row["trusted"]

    with RunStore.open(res.run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
    r = reading(tree[child.hash])
    assert (r.value, r.low, r.high, r.retimed, r.trusted, r.which) == (RETIMED, 1.8, 2.2, True, True, "re-timed")
    assert reading(tree[root.hash]).which == "first timing"

    # the tree: the re-timed reading, marked, and no "slower than its parent" that its numbers contradict
    text = _text(run_tree(res.run_dir))
    line = _line(text, child.hash)
    assert f"{r.text()} re-timed" in line and "(slower than its parent)" not in line
    assert "(slower than its parent at their first timings)" in line  # what the search acted on, named as such
    assert "re-timed: from the final, longer round" in text  # the legend defines the word
    # show: the same reading, with which timing it is
    show = _text(candidate_view(res.run_dir, child.hash[:10]))
    assert "speedup vs eager  2x [1.8, 2.2] (re-timed)" in show
    # the end-of-run table (the summary): the best is the child, read as above
    summary = json.loads((res.run_dir / "summary.json").read_text())
    assert summary["best"]["hash"] == child.hash and summary["best"]["speedup"] == r.value
    table = _text(result_table(res.run_dir))
    assert "2x [1.8, 2.2] (95% interval, re-timed)" in table
    assert progress_best(tree) == f"best 2.00x ({child.hash[:8]}, schedule, re-timed)"  # optimize's progress line
    # the report: the node's speedup and its reading, the run's best
    ctx = build_context(load_results(res.run_dir, count_initial=True))
    details = ctx["details_json"]
    assert f'"speedup":{RETIMED},"reading":"re-timed"' in details
    assert ctx["runs"][0]["best"] == "2x [1.8, 2.2] (re-timed)"
    assert "re-timed" in ctx["runs"][0]["svg"]


def test_show_prints_the_whole_hash_on_one_line_in_a_narrow_terminal(tmp_path):
    res = optimize(FakeTask(), FakeBackend(), Proposer(), Evaluator(), "greedy", Budget(evaluations=2),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0, lookahead_expansions=0))
    digest = json.loads((res.run_dir / "summary.json").read_text())["best"]["hash"]
    lines = _text(candidate_view(res.run_dir), width=60).splitlines()
    assert any(ln.split() == ["hash", digest] for ln in lines)  # never folded over two lines


def test_show_of_an_untimed_candidate_aligns_the_hash_with_the_rows(tmp_path):
    class Untimed(Evaluator):
        def evaluate(self, task, backend, srcs):
            return {"verdict": "correct"}, None

    res = optimize(FakeTask(), FakeBackend(), Proposer(), Untimed(), "greedy", Budget(evaluations=1),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0, lookahead_expansions=0))
    lines = _text(candidate_view(res.run_dir), width=60).splitlines()
    hash_line = next(ln for ln in lines if ln.startswith("hash "))
    verdict = next(ln for ln in lines if ln.startswith("verdict "))
    assert len(hash_line) - len(hash_line[4:].lstrip()) == len(verdict) - len(verdict[7:].lstrip())
    assert "speedup" not in "\n".join(lines)
    # not 'initial / initial (initial)'
    assert "level / role initial (the run's starting point, not an edit)" in " ".join(" ".join(lines).split())


def test_show_gives_a_finding_that_another_holds_once(tmp_path):
    from search_fakes import contended_finding

    untrusted = contended_finding(1.5)  # holds the judge's note, as the final round writes it
    note = untrusted.split("timing: ", 1)[1].split(" in the final", 1)[0]

    class Contended(Evaluator):
        def evaluate(self, task, backend, srcs):
            ev, m = super().evaluate(task, backend, srcs)
            return ev, {**m, "findings": [untrusted, note]}

    res = optimize(FakeTask(), FakeBackend(), Proposer(), Contended(), "greedy", Budget(evaluations=1),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0, lookahead_expansions=0))
    text = " ".join(_text(candidate_view(res.run_dir)).split())
    assert text.count("other processes kept 1.50 of 2 CPUs busy") == 1
