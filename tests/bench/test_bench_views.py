"""Bench output a newcomer can use: ``kstrata tree`` and ``report`` work on a
bench directory, the end of ``kstrata bench`` prints each cell's speedup with
its interval, the harness reports the best speedup per cell, and the default
backend is one the builtin proposer has rules for."""

from __future__ import annotations

from rich.console import Console
from typer.testing import CliRunner

from kstrata.bench.metrics import format_speedup
from kstrata.bench.results import load_results
from kstrata.cli.main import app
from kstrata.search.views import bench_table, run_tree


def _text(renderable) -> str:
    console = Console(width=300, record=True, file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text()


def test_tree_and_report_and_table_on_a_bench_directory(small_bench, tmp_path):
    path, result = small_bench
    text = _text(run_tree(path))
    assert text.count(" on pytorch · ") == 4  # 2 tasks x 2 proposers, one tree each
    table = _text(bench_table(path))
    for o in load_results(path).outcomes:
        assert o.task in table
        if o.correct and o.speedup is not None:
            assert format_speedup(o.speedup, o.speedup_ci) in table
    r = CliRunner().invoke(app, ["tree", str(path)])
    assert r.exit_code == 0 and "relu on pytorch" in r.output
    r = CliRunner().invoke(app, ["report", str(path), "--out", str(tmp_path / "r.html")])
    assert r.exit_code == 0 and (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")


def test_cell_done_carries_the_best_speedup(tmp_path):
    from bench_helpers import make_bench

    class Fixed:  # stands in for verify + time: the test is about what the harness reports
        def evaluate(self, task, backend, sources):
            return {"verdict": "correct"}, {"median_ms": 1.0, "speedups": {"eager": 1.25}}

    events = []
    make_bench(tmp_path / "b", tasks=("relu",), proposers=("edits",), evals=2,
               progress=lambda e, c: events.append((e, c)), evaluator_factory=lambda *a: Fixed())
    done = [c for e, c in events if e == "cell_done"]
    assert len(done) == 1 and done[0]["speedup"] == 1.25
    # between a cell's start and end the search's own events come through, tagged with the cell
    names = [e for e, _ in events]
    start, end = names.index("cell_start"), names.index("cell_done")
    inner = [c for e, c in events[start:end] if e == "evaluated"]
    assert len(inner) == 2 and all(c["task"] == "relu" and c["proposer"] == "edits" for c in inner)
    assert [int(c["spent"]["evaluations"]) for c in inner] == [1, 2]


def test_bench_prints_a_line_per_evaluation_inside_a_cell(tmp_path, monkeypatch):
    # newcomer nc17 F13: a bench said nothing between "▶ cell" and "done" for the whole search
    import kstrata.cli.bench as cli_bench

    def fake_run_bench(spec, out, resume=False, proposers=None, progress=None, executor="local"):
        from kstrata.bench.harness import BenchResult

        cell = {"task": "relu", "backend": "tvm-llvm", "proposer": "builtin", "run_dir": "runs/x"}
        progress("cell_start", cell)
        for n in (1, 2):
            progress("evaluating", {**cell, "node": None})
            progress("evaluated", {**cell, "tree": None, "spent": {"evaluations": n}})
        progress("stopped", {**cell, "tree": None, "spent": {"evaluations": 2}})  # no second 'evaluated 2'
        progress("cell_failed", {**cell, "error": "stopped here"})
        result = BenchResult(out)
        result.cells = []
        return result

    monkeypatch.setattr(cli_bench, "run_bench", fake_run_bench)
    r = CliRunner().invoke(app, ["bench", "--tasks", "relu", "--budget", "evals=2", "--out", str(tmp_path / "b")])
    lines = r.output.splitlines()
    evaluated = [ln for ln in lines if "relu · tvm-llvm · builtin: evaluated" in ln]
    assert [ln.split("evaluated ")[1].split(" ")[0] for ln in evaluated] == ["1", "2"], r.output
    assert lines.index(evaluated[0]) > next(i for i, ln in enumerate(lines) if "▶" in ln)


def test_bench_defaults_are_a_backend_and_proposer_that_work_together():
    import typer

    from kstrata.backends.registry import get_backend
    from kstrata.bench.harness import get_proposer

    params = {p.name: p.default for p in typer.main.get_command(app).commands["bench"].params}
    backend, proposer = params["backends"], params["proposers"]
    assert (backend, proposer) == ("tvm-llvm", "builtin")
    assert get_proposer(proposer, get_backend(backend)) is not None  # pytorch raised BenchError here
