"""``kstrata eval`` of a run's candidate against another task, or with another ``--backend``, says so
before anything runs (newcomer nc17: a scaled_gelu run's best/ evaluated for l2norm_rows ended in a
compile_error TypeError after 12 s; with a wrong --backend it said "no level files of triton-interp")."""

from __future__ import annotations

from bench_helpers import untimed_relu_run
from typer.testing import CliRunner

from kstrata.api import candidate_task
from kstrata.cli.main import app


def _eval(*args: str):
    r = CliRunner().invoke(app, ["eval", *args, "--scope", "small", "--no-time"], env={"COLUMNS": "400"})
    return r.exit_code, " ".join(r.output.split())


def test_a_runs_candidate_against_another_task_is_refused_naming_its_task(tmp_path):
    res = untimed_relu_run(tmp_path / "run")
    assert candidate_task(res.run_dir / "best") == "relu"
    rc, text = _eval("sigmoid", str(res.run_dir / "best"))
    assert rc == 2 and "is a candidate of relu, not of sigmoid" in text and "kstrata eval relu" in text, text


def test_a_runs_candidate_with_another_backend_names_the_runs_backend(tmp_path):
    res = untimed_relu_run(tmp_path / "run")
    rc, text = _eval("relu", str(res.run_dir / "best"), "--backend", "triton-interp")
    assert rc == 2 and "a pytorch candidate (its run's backend), not a triton-interp one" in text, text
    assert candidate_task(tmp_path) is None  # a folder of nothing kstrata wrote
