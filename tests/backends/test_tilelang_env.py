"""kstrata.backends.envs and the TileLang backend's main-environment side (fast)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kstrata.backends import envs
from kstrata.backends.base import CandidateLoadError
from kstrata.backends.registry import get_backend
from kstrata.backends.tilelang.backend import compose_source, schedule_defaults


@pytest.fixture
def empty_root(tmp_path, monkeypatch):
    monkeypatch.setenv("KSTRATA_ENV_DIR", str(tmp_path))
    return tmp_path


def test_main_env_backends_need_no_interpreter():
    assert envs.python_for("pytorch") is None
    assert envs.spec_for_backend("tilelang-c") is envs.TILELANG
    assert envs.spec_for_backend("tilelang-cuda") is envs.TILELANG


def test_missing_env_says_run_setup(empty_root):
    with pytest.raises(envs.EnvMissingError, match="kstrata setup"):
        envs.python_for("tilelang-c")
    av = get_backend("tilelang-c").availability()
    assert not av.usable and "kstrata setup" in av.reason
    assert str(empty_root) in av.reason


def test_interrupted_setup_is_not_ready(empty_root):
    py = envs.env_python("tilelang")
    py.parent.mkdir(parents=True)
    py.write_text("")
    ok, why = envs.env_ready("tilelang")
    assert not ok and "interrupted" in why


def test_up_to_date_env_is_a_noop(empty_root):
    plan = envs.make_plan(envs.TILELANG)
    py = envs.env_python("tilelang")
    py.parent.mkdir(parents=True)
    py.write_text("")
    manifest = {"plan_digest": plan.digest(), "installed": {"tilelang": "0.1.15"}}
    (envs.env_dir("tilelang") / envs.MANIFEST).write_text(json.dumps(manifest))
    res = envs.ensure_env(envs.TILELANG, log=pytest.fail)  # would fail if it ran anything
    assert (res.changed, res.message) == (False, "up to date")
    assert envs.python_for("tilelang-c") == py
    assert dict(envs.availability("tilelang-c").versions) == {"tilelang": "0.1.15"}
    # A different torch spec is a different plan: not up to date any more.
    assert envs.make_plan(envs.TILELANG, torch_spec="torch==2.4.0").digest() != plan.digest()


def test_plan_pins_and_excludes_tvm(monkeypatch):
    monkeypatch.delenv("KSTRATA_TORCH_SPEC", raising=False)
    plan = envs.make_plan(envs.TILELANG)
    import torch

    assert plan.torch == f"torch=={torch.__version__.split('+')[0]}"
    assert "tilelang==0.1.15" in plan.packages
    assert not any(r.startswith(("apache-tvm", "xgboost", "torch")) for r in plan.kstrata_deps)
    # a checkout is not installed into the shared environment (workers import it through PYTHONPATH),
    # so the plan, and the environment, are the same for every clone
    assert plan.kstrata == () or plan.kstrata[0].startswith("kstrata==")
    monkeypatch.setenv("KSTRATA_TORCH_SPEC", "torch>=2.4")
    assert envs.make_plan(envs.TILELANG).torch == "torch>=2.4"


def test_plan_names_no_checkout_so_clones_share_the_environment():
    """`kstrata setup` in a second clone must not re-point the first clone's environment:
    the plan (and its digest, which decides a re-install) holds no path of this checkout."""
    import json
    from dataclasses import asdict
    from pathlib import Path

    checkout = str(Path(envs.__file__).resolve().parents[3])
    plan = envs.make_plan(envs.TILELANG)
    assert checkout not in json.dumps(asdict(plan))
    # and the environment's processes import kstrata from this checkout
    assert envs._checkout_env()["PYTHONPATH"].split(":")[0].startswith(checkout)


def test_backend_module_does_not_import_tilelang():
    code = ("import sys, kstrata.backends.registry as r; b = r.get_backend('tilelang-c'); "
            "b.availability(); print('tilelang' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_load_in_main_env_is_a_clear_load_error():
    from kstrata.tasks.loader import resolve_task

    b = get_backend("tilelang-c")
    task = resolve_task("relu")
    with pytest.raises(CandidateLoadError, match="python_for"):
        b.load(task, b.initial_sources(task), task.small_shapes[0], [])


def test_schedule_level_overrides_defaults():
    src = 'SCHEDULE = {"block": 64, "threads": 1}\n'
    assert schedule_defaults(src) == {"block": 64, "threads": 1}
    ns: dict = {}
    exec(compose_source({"source": src, "schedule": '{"block": 128}'}), ns)
    assert ns["SCHEDULE"] == {"block": 128, "threads": 1}
    assert compose_source({"source": src, "schedule": ""}) == src
    with pytest.raises(CandidateLoadError, match="JSON"):
        compose_source({"source": src, "schedule": "block=1"})
    with pytest.raises(CandidateLoadError, match="'source'"):
        compose_source({"schedule": "{}"})


def test_initial_sources_have_all_levels():
    from kstrata.tasks.loader import resolve_task

    srcs = get_backend("tilelang-c").initial_sources(resolve_task("relu"))
    assert set(srcs) == {"graph", "schedule", "source"}
    assert "Fusion plan" in srcs["graph"] and json.loads(srcs["schedule"])["block"] > 0


def test_workers_find_the_environments_where_setup_made_them(empty_root):
    """A judge worker runs with a scrubbed environment (kstrata.execute.pool.worker_env);
    it must still see ``$KSTRATA_ENV_DIR``, or it starts TileLang candidates with the
    interpreter of ``~/.cache/kstrata/envs`` (another environment, or none)."""
    from kstrata.execute.pool import worker_env

    code = "from kstrata.backends import envs; print(envs.env_root())"
    out = subprocess.run([sys.executable, "-c", code], env=worker_env(), capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == str(empty_root)


def test_requirements_of_a_source_tree_come_from_its_pyproject(monkeypatch):
    """On a machine where kstrata runs from its checkout (PYTHONPATH=src, no pip
    install: the lent GPU), the environment gets the checkout's own requirements."""
    import tomllib
    from importlib import metadata
    from pathlib import Path

    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(envs.metadata, "requires", not_installed)
    got = envs.kstrata_requirements()
    pyproject = Path(envs.__file__).resolve().parents[3] / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    names = {r.split(";")[0].split(">")[0].split("=")[0].strip().lower() for r in got}
    assert "platformdirs>=3" in got and "cloudpickle>=3.0" in got
    assert not names & {"torch", "apache-tvm", "apache-tvm-ffi", "triton", "openai"}
    assert set(got) <= {d.split(";")[0].strip() for d in declared}
