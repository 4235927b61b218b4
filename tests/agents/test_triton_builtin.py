"""The built-in proposer on ``triton-interp``: a search from the shipped kernel
or a user's ``--initial`` file that grows distinct, correct variants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kstrata import kernels
from kstrata.agents.registry import make_proposer
from kstrata.backends.registry import get_backend
from kstrata.backends.triton import tune_rules as tr
from kstrata.cli.main import app
from kstrata.execute import WorkerPool
from kstrata.search.budget import Budget
from kstrata.search.candidate import normalize_source
from kstrata.search.loop import optimize
from kstrata.store.run_store import RunStore
from kstrata.tasks.loader import resolve_task

USER_SOFTMAX = (Path(__file__).parents[1] / "backends" / "data" / "user_softmax_triton.py").read_text()

CHECK = "kstrata.backends.tilelang.check:check_candidate"


def _params(text: str) -> tuple:
    """What a candidate's tunables are set to, plus whether rows are restructured."""
    return tuple(sorted((t.label, t.value) for t in tr.find_tunables(text)))


class SmallShapesEvaluator:
    """Outputs against the reference on the task's small shapes, in a worker (no timing)."""

    def __init__(self, pool):
        self.pool = pool

    def evaluate(self, task, backend, sources):
        for shape in task.small_shapes:
            r = self.pool.call(CHECK, backend.name, str(task.path), sources, shape,
                               atol=1e-4, rtol=1e-4, timeout_s=300)
            if not r.ok or not r.value["ok"]:
                return {"verdict": "incorrect", "evidence": {"shape": shape, "error": r.error}}, None
        return {"verdict": "correct", "evidence": {"shapes": task.small_shapes}}, None


def test_builtin_search_from_the_shipped_kernel(tmp_path):
    task, backend = resolve_task("softmax"), get_backend("triton-interp")
    proposer = make_proposer("builtin", backend=backend)
    with WorkerPool(size=1, env={"TRITON_INTERPRET": "1"}) as pool:
        result = optimize(task, backend, proposer, SmallShapesEvaluator(pool),
                          budget=Budget(evaluations=5), run_dir=tmp_path / "run")
    with RunStore.open(result.run_dir) as store:
        evaluated = [c for c in store.candidates(with_sources=True) if c.evaluation is not None]
    assert len(evaluated) == 5
    assert all(c.evaluation.verdict == "correct" for c in evaluated)
    root = next(c for c in evaluated if c.role == "initial")
    assert root.sources["source"] == normalize_source(kernels.initial_source("triton", "softmax"))
    settings = {_params(c.sources["source"]) for c in evaluated}
    assert len(settings) == 5  # five different tunable settings, not five copies
    # at softmax's nominal 4096 x 4096 the shape ranking puts more warps and the two-pass split before
    # rows per program (tests/backends/test_triton_tune_rules.py checks the order for short rows)
    assert {c.role for c in evaluated} >= {"initial", "triton-tune"}


@pytest.fixture
def root_only(monkeypatch):
    """The run stores its root and evaluates nothing (the CLI refuses --budget evals=0)."""
    from kstrata.cli import optimize as cli_optimize

    monkeypatch.setattr(cli_optimize, "_budget", lambda option, resume: Budget(evaluations=0))


def test_initial_file_is_the_root(tmp_path, root_only):
    user = tmp_path / "my_softmax.py"
    user.write_text(USER_SOFTMAX)
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["optimize", "softmax", "--backend", "triton-interp", "--initial", str(user),
                                 "--budget", "evals=1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    with RunStore.open(out) as store:
        [root] = [c for c in store.candidates(with_sources=True) if c.role == "initial"]
    assert root.sources == {"source": normalize_source(USER_SOFTMAX)}


def test_initial_json_sources_and_bad_levels(tmp_path, root_only):
    good = tmp_path / "cand.json"
    good.write_text(json.dumps({"source": USER_SOFTMAX}))
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["optimize", "softmax", "-b", "triton-interp", "--initial", str(good),
                                 "--budget", "evals=1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schedule": "{}"}))
    r = CliRunner().invoke(app, ["optimize", "softmax", "-b", "triton-interp", "--initial", str(bad),
                                 "--budget", "evals=1", "--out", str(tmp_path / "run2")])
    assert r.exit_code == 2 and "error:" in r.output and "schedule" in r.output


def test_no_shipped_start_and_no_initial_is_a_clear_error(tmp_path):
    assert kernels.initial_source("triton", "argmax_dim") is None
    r = CliRunner().invoke(app, ["optimize", "argmax_dim", "--backend", "triton-interp", "--budget", "evals=1",
                                 "--out", str(tmp_path / "run")])
    assert r.exit_code == 2, r.output
    assert "error:" in r.output and "--initial" in r.output
    assert not (tmp_path / "run" / "run.db").exists()


@pytest.mark.slow
@pytest.mark.heavy  # a whole search under Triton's CPU interpreter (~80-120 s on 2 CPUs)
def test_cli_optimize_softmax_builtin_verified(tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["optimize", "softmax", "--backend", "triton-interp", "--budget", "evals=4",
                                 "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert r.output.count("· stopped") == 1, r.output  # the last progress line once (no Live reprint off a tty)
    assert "correct, not timed)" in r.output  # triton-interp: correctness only
    assert f"kstrata export {out} --to DIR" in r.output
    assert not any(line.rstrip().endswith(("· evaluated", "· expanded")) for line in r.output.splitlines())
    with RunStore.open(out) as store:
        evaluated = [c for c in store.candidates(with_sources=True) if c.evaluation is not None]
    assert len(evaluated) == 4 and all(c.evaluation.verdict == "correct" for c in evaluated)
    assert len({_params(c.sources["source"]) for c in evaluated}) == 4
