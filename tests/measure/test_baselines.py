import json

from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.measure import baselines
from kstrata.measure.baselines import run_baselines
from kstrata.measure.timing import TimingConfig
from kstrata.tasks.loader import resolve_task

FAST = TimingConfig(budget_ms=20, min_reps=5, max_reps=20, warmup_ms=2, flush_bytes=1 << 20,
                    max_remeasure=0)
SHAPE = {"B": 8, "D": 64}


def test_run_baselines_eager_compile_and_cache(monkeypatch):
    task = resolve_task("rmsnorm")
    first = run_baselines(task, "pytorch", SHAPE, config=FAST)
    assert [r.kind for r in first] == ["eager", "compile"]
    eager = first[0]
    assert eager.available and eager.measurement["candidate"]["median"] > 0
    comp = first[1]
    if comp.available:  # compile paired with eager
        assert comp.measurement["labels"] == {"candidate": "compile", "baseline": "eager"}
        assert comp.measurement["speedup"]["low"] <= comp.measurement["speedup"]["high"]
    else:
        assert comp.reason.startswith("torch.compile failed")
    # second call: from the cache, without timing anything
    monkeypatch.setattr(baselines, "measure", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
    second = run_baselines(task, "pytorch", SHAPE, config=FAST)
    assert all(r.cached for r in second) and second[0].measurement == eager.measurement
    # a different shape is a different key
    assert baselines.baseline_key(task, SHAPE, "pytorch", 64, FAST) != baselines.baseline_key(
        task, {"B": 9, "D": 64}, "pytorch", 64, FAST)


def test_compile_failure_is_recorded_not_raised():
    def bad(x):
        raise RuntimeError("boom")

    try:
        baselines.compiled(bad, [1])
    except baselines.BaselineUnavailable as e:
        assert "torch.compile failed" in str(e) and "boom" in str(e)
    else:
        raise AssertionError("expected BaselineUnavailable")


def test_metaschedule_unavailable_is_data(monkeypatch):
    task = resolve_task("rmsnorm")
    out = run_baselines(task, "pytorch", SHAPE, config=FAST, use_cache=False,
                        unavailable={"compile": "skipped by the caller"})
    assert out[1].available is False and out[1].reason == "skipped by the caller"
    assert baselines.kinds_for("tvm-llvm") == ("eager", "compile", "metaschedule")
    assert baselines.kinds_for("triton") == ("eager", "compile")


def test_cli_baseline_prints_eager_and_compile():
    runner = CliRunner()
    args = ["baseline", "rmsnorm", "--backend", "pytorch", "--shape", "B=8,D=64",
            "--budget-ms", "20", "--in-process"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "eager" in r.output and "compile" in r.output and "median" in r.output and "(95% CI)" in r.output
    r = runner.invoke(app, args + ["--json"])
    data = json.loads(r.output)
    assert [d["kind"] for d in data] == ["eager", "compile"]


def test_cli_baseline_bad_input():
    runner = CliRunner()
    r = runner.invoke(app, ["baseline", "no_such_task_xyz", "--in-process"])
    assert r.exit_code == 2
    r = runner.invoke(app, ["baseline", "rmsnorm", "--shape", "B=x", "--in-process"])
    assert r.exit_code == 2 and "NAME=INT" in r.output


def test_cli_baseline_times_at_the_fitted_shape_by_default(monkeypatch):
    """As optimize and eval: on a CPU backend the default is the fitted shape, not the nominal one."""
    from kstrata.cli import baseline as baseline_cli
    from kstrata.tasks.scaling import fitted_shape

    seen = []
    monkeypatch.setattr(baseline_cli, "run_baselines", lambda task, backend, shape, **kw: seen.append(shape) or [])
    r = CliRunner().invoke(app, ["baseline", "rmsnorm", "--backend", "pytorch", "--in-process", "--json"])
    assert r.exit_code == 0, r.output
    task = resolve_task("rmsnorm")
    assert seen == [fitted_shape(task)] and seen[0] != task.nominal_shape
    r = CliRunner().invoke(app, ["baseline", "rmsnorm", "--shape", "nominal", "--in-process", "--json"])
    assert r.exit_code == 0 and seen[-1] == task.nominal_shape
