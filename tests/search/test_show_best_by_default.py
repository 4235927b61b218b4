"""``kstrata show RUN`` without a candidate shows the run's best (what ``best/``
holds) and says which it is; ``kstrata show RUN CAND`` still shows CAND."""

from __future__ import annotations

import json
import re

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.search import Budget, SearchSettings, optimize
from kstrata.store.run_store import RunStore


class NoneCorrect(FakeEvaluator):
    def evaluate(self, task, backend, srcs):
        ev, _ = super().evaluate(task, backend, srcs)
        return {**ev, "verdict": "incorrect"}, None


def _run(tmp_path, evaluator):
    return optimize(FakeTask(), FakeBackend(), FakeProposer(), evaluator, "greedy", Budget(evaluations=4),
                    tmp_path / "run", settings=SearchSettings(final_contenders=0))


def _show(*args):
    return CliRunner().invoke(app, ["show", *map(str, args)], env={"COLUMNS": "300"})


def _flat(text: str) -> str:
    """The output without line breaks or runs of spaces: the CLI's console takes its
    width when its module is first imported, so where lines wrap depends on test order."""
    return " ".join(text.split())


def _hash_row(text: str, digest: str) -> bool:
    return f"hash{digest}" in re.sub(r"\s+", "", text)


def test_show_without_a_candidate_shows_the_runs_best_and_says_so(tmp_path):
    res = _run(tmp_path, FakeEvaluator())
    best = json.loads((res.run_dir / "summary.json").read_text())["best"]["hash"]
    r = _show(res.run_dir)
    assert r.exit_code == 0, r.output
    assert f"showing the run's best, {best[:12]} (ranked, " in _flat(r.output)
    assert _hash_row(r.output, best)
    # a named candidate still works: that one, without the best's line
    with RunStore.open(res.run_dir) as store:
        first = next(c.hash for c in store.candidates() if c.hash != best)
    named = _show(res.run_dir, first[:10])
    assert named.exit_code == 0 and _hash_row(named.output, first)
    assert "showing the run's best" not in named.output


def test_show_without_a_candidate_in_a_run_with_none_correct_is_one_clear_error(tmp_path):
    res = _run(tmp_path, NoneCorrect())
    r = _show(res.run_dir)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "no correct candidate, so no best to show" in r.output and f"kstrata tree {res.run_dir}" in r.output
