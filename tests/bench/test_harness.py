"""Real bench runs: pytorch backend, suite tasks, a deterministic proposer,
the real verifier and timer (see bench_helpers); the interrupted bench's
resume with a stand-in evaluator."""

import json

import pytest
from bench_helpers import PROPOSERS, CorrectUntimed, make_bench
from typer.testing import CliRunner

from kstrata.bench.compare import compare_results
from kstrata.bench.harness import BenchError, BenchIndex, get_proposer, parse_budget, resolve_suite
from kstrata.bench.results import load_results
from kstrata.cli.main import app
from kstrata.store.run_store import RunStore
from kstrata.tasks.base import TaskError


def _evaluated(run_dir):
    with RunStore.open(run_dir) as s:
        return {c.hash: c.evaluation.verdict for c in s.candidates() if c.evaluation}, s.spent()


def test_parse_budget_and_suite():
    b = parse_budget("evals=3,wall=60,calls=4,tokens_in=100,cost=0.5")
    assert (b.evaluations, b.wall_clock_s, b.proposer_calls, b.tokens_in, b.cost_usd) == (3, 60.0, 4, 100, 0.5)
    assert parse_budget("wall=10").evaluations is None
    for bad in ("evals", "bogus=1", "evals=x", ""):
        with pytest.raises(BenchError):
            parse_budget(bad)
    assert {t.name for t in resolve_suite("level1", ["relu", "gelu"])} == {"relu", "gelu"}
    assert all(t.level == 3 for t in resolve_suite("level3"))
    with pytest.raises(TaskError, match="unknown suite"):
        resolve_suite("nope")
    with pytest.raises(TaskError, match="not in suite"):
        resolve_suite("level2", ["relu"])
    with pytest.raises(BenchError, match="known proposers: broken, edits"):
        get_proposer("llm", "pytorch", PROPOSERS)
    assert get_proposer("edits", "pytorch", PROPOSERS).name == "edits"


def test_a_folder_with_a_candidate_file_benches_the_named_task(tmp_path):
    """newcomer nc14: `bench --suite my --tasks l2small` stopped at another file of my/ (a candidate);
    the whole folder still must be tasks, and a missing name says which files were not."""
    from kstrata.tasks.loader import resolve_task

    (tmp_path / "relu.py").write_text(resolve_task("relu").source)
    (tmp_path / "my_kernel.py").write_text("import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n")
    assert [t.name for t in resolve_suite(str(tmp_path), ["relu"])] == ["relu"]
    with pytest.raises(TaskError, match="my_kernel.py"):
        resolve_suite(str(tmp_path))
    with pytest.raises(TaskError, match="not in suite .*files there that are no task: .*my_kernel.py"):
        resolve_suite(str(tmp_path), ["gelu"])


def test_bench_end_to_end_and_resume_repeats_nothing(small_bench):
    path, result = small_bench
    assert len(result.ran) == 4 and not result.skipped
    cells = {(c["task"], c["proposer"]): c for c in result.cells}
    assert all(c["status"] == "done" for c in cells.values())
    res = load_results(path)
    by = {(o.task, o.proposer): o for o in res.outcomes}
    # "edits": one correct (timed) and one incorrect child per task, evals=3 with the root
    for task in ("relu", "sigmoid"):
        o = by[task, "edits"]
        assert o.correct and o.compiled and o.speedup > 0 and "eager" in o.speedups
        assert o.verdicts == {"correct": 1, "incorrect": 1}
        assert o.checks == {"incorrect/tolerance": 1} and o.incorrect_stages == {"public": 1}
        assert o.spent["evaluations"] == 3 and o.spent["tokens_in"] == 10
        b = by[task, "broken"]
        assert not b.compiled and not b.correct and b.verdicts == {"compile_error": 1}
    bench_json = json.loads((path / "bench.json").read_text())
    assert bench_json["environment"]["versions"]["torch"]
    assert bench_json["spec"]["timing_shape"] == "B=64,D=512"
    # each cell timed at the bench's timing shape, recorded where retime and show look for it
    with RunStore.open(path / cells["relu", "edits"]["run_dir"]) as store:
        assert store.config["cli"]["timing_shape"] == {"B": 64, "D": 512}
    before = {c: _evaluated(path / cells[c]["run_dir"]) for c in cells}
    again = make_bench(path, resume=True)
    assert not again.ran and len(again.skipped) == 4
    assert {c: _evaluated(path / cells[c]["run_dir"]) for c in cells} == before
    with pytest.raises(BenchError, match="already holds a bench"):
        make_bench(path)
    with pytest.raises(BenchError, match="other settings"):
        make_bench(path, tasks=("relu",), resume=True)


def test_interrupted_bench_resumes_where_it_stopped(tmp_path):
    """The stand-in evaluator (every candidate correct, none timed): what is tested is
    where a resume starts and what it counts; the bench above verifies and times for
    real, resume included (the real evaluator made this test 43 s of the full run)."""
    calls = []

    class Interrupting(CorrectUntimed):
        def evaluate(self, task, backend, sources):
            calls.append(task.name)
            if len(calls) == 2:  # the first child of the first cell
                raise KeyboardInterrupt
            return super().evaluate(task, backend, sources)

    def factory(spec, backend, secret, pool, shape=None):
        return Interrupting()

    with pytest.raises(KeyboardInterrupt):
        make_bench(tmp_path / "b", tasks=("relu",), proposers=("edits",), evaluator_factory=factory)
    with BenchIndex(tmp_path / "b") as index:
        (cell,) = index.cells()
    assert cell["status"] == "running"
    run_dir = tmp_path / "b" / cell["run_dir"]
    evaluated, _ = _evaluated(run_dir)
    assert len(evaluated) == 1  # the root; its children are pending
    result = make_bench(tmp_path / "b", tasks=("relu",), proposers=("edits",), resume=True,
                        evaluator_factory=factory)
    assert result.ran == [("relu", "pytorch", "edits")] and result.cells[0]["status"] == "done"
    evaluated2, spent = _evaluated(run_dir)
    assert len(evaluated2) == 3 and spent["evaluations"] == 3
    assert set(evaluated) <= set(evaluated2)
    # the budget grows: the done cell continues its run, evaluating only new candidates
    more = make_bench(tmp_path / "b", tasks=("relu",), proposers=("edits",), resume=True, evals=4,
                      evaluator_factory=factory)
    assert more.ran and _evaluated(run_dir)[1]["evaluations"] == 4


def test_timing_shape_is_checked_before_anything_is_written(tmp_path):
    from dataclasses import replace

    from kstrata.backends.registry import get_backend
    from kstrata.bench.harness import BenchSpec, run_bench, timing_shape
    from kstrata.tasks.scaling import fitted_shape

    spec = BenchSpec(suite="all", backends=("pytorch",), proposers=("edits",), budget={"evaluations": 1},
                     tasks=("relu",), timing_shape="N=3")
    with pytest.raises(BenchError, match="timing shape 'N=3' for relu: .*no shape variable 'N'"):
        run_bench(spec, tmp_path / "b", proposers=PROPOSERS)
    assert not (tmp_path / "b").exists()
    relu, cpu = resolve_suite("level1", ["relu"])[0], get_backend("pytorch")
    assert timing_shape(replace(spec, timing_shape="auto"), relu, cpu) == fitted_shape(relu)  # fit on a CPU
    assert timing_shape(replace(spec, timing_shape="nominal"), relu, cpu) == {"B": 4096, "D": 4096}
    assert timing_shape(replace(spec, timing_shape="D=77"), relu, cpu) == {"B": 4096, "D": 77}


def test_compare_and_cli(small_bench, tmp_path):
    path, result = small_bench
    pairs = compare_results(path, path, n_resamples=200)
    assert {p.group for p in pairs} == {"pytorch / edits", "pytorch / broken"}
    assert all(p.diff in (0, None) for p in pairs)
    assert all(p.overlap in (True, None) for p in pairs)
    edits = {p.metric: p for p in pairs if p.group == "pytorch / edits"}
    assert edits["correct_rate"].a.value == 1.0
    # two single runs with different proposers are compared as groups "all"
    runs = {c["proposer"]: path / c["run_dir"] for c in result.cells if c["task"] == "relu"}
    pairs = {p.metric: p for p in compare_results(runs["edits"], runs["broken"], n_resamples=200)}
    assert pairs["correct_rate"].diff == -1.0 and pairs["correct_rate"].a.n == 1
    runner = CliRunner()
    # an 80-column terminal (piped output takes the table's natural width since nc16: Console.PIPE_WIDTH)
    out = runner.invoke(app, ["compare", str(runs["edits"]), str(runs["broken"])], env={"COLUMNS": "80"})
    assert out.exit_code == 0, out.output
    assert "correct rate" in out.output and "-1" in out.output and "fast_1.5" in out.output
    assert "ran different tasks" not in out.output
    # one task each: its interval is a point, so no row says the two differ (newcomer nc13), and the table
    # fits the console's 80 columns (it was printed 200 wide whatever the terminal)
    assert pairs["correct_rate"].too_few and pairs["correct_rate"].overlap is None
    assert "no (differs)" not in out.output and "– (1 task)" in out.output
    assert max(len(line) for line in out.output.splitlines()) <= 80, out.output
    other = next(path / c["run_dir"] for c in result.cells if c["task"] != "relu")
    out = runner.invoke(app, ["compare", str(runs["edits"]), str(other)])
    assert out.exit_code == 0 and "A and B ran different tasks (only in A: relu" in " ".join(out.output.split())
    out = runner.invoke(app, ["compare", str(path), str(tmp_path / "missing")])
    assert out.exit_code == 2
    out = runner.invoke(app, ["bench", "--suite", "level1", "--tasks", "relu", "--proposers",
                              "no-such-proposer", "--budget", "evals=1", "--out", str(tmp_path / "x")])
    assert out.exit_code == 2 and "unknown proposer 'no-such-proposer'" in out.output
    out = runner.invoke(app, ["bench", "--budget", "evals=", "--out", str(tmp_path / "x")])
    assert out.exit_code == 2 and "budget evals must be a number" in out.output
    assert not (tmp_path / "x").exists()
