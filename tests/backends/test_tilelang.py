"""TileLang candidates run through a worker in the TileLang environment.

CI runs ``kstrata setup`` before pytest; if the environment is missing, the
``tilelang_python`` fixture creates it once (about a minute).
"""

from __future__ import annotations

import pytest

from kstrata import kernels
from kstrata.backends import envs
from kstrata.backends.registry import get_backend
from kstrata.execute import WorkerPool
from kstrata.tasks.loader import resolve_task

CHECK = "kstrata.backends.tilelang.check:check_candidate"


@pytest.fixture(scope="module")
def pool():
    ok, _ = envs.env_ready("tilelang")
    if not ok:
        envs.ensure_env(envs.TILELANG)
    with WorkerPool(size=1, python=str(envs.python_for("tilelang-c"))) as p:
        yield p


def _check(pool, task, sources, shape, **kw):
    r = pool.call(CHECK, "tilelang-c", str(task.path), sources, shape, timeout_s=300, **kw)
    assert r.ok, f"{r.kind}: {r.error}\n{r.traceback}"
    return r.value


def test_env_has_tilelang_not_tvm(pool):
    r = pool.call("importlib.metadata:version", "tilelang", timeout_s=60)
    assert r.value == "0.1.15"
    r = pool.call("importlib.metadata:version", "apache-tvm", timeout_s=60)
    assert not r.ok and "PackageNotFoundError" in r.error


@pytest.mark.parametrize("name", kernels.tasks_with_initial("tilelang"))
def test_initial_candidate_matches_reference(pool, name):
    task = resolve_task(name)
    sources = get_backend("tilelang-c").initial_sources(task)
    for shape in task.small_shapes:
        res = _check(pool, task, sources, shape)
        assert res["ok"], f"{name} {shape}: {res}"


def test_schedule_override_is_used(pool):
    task = resolve_task("relu")
    sources = get_backend("tilelang-c").initial_sources(task)
    res = _check(pool, task, {**sources, "schedule": '{"block": 7}'}, {"B": 5, "D": 77})
    assert res["ok"]


def test_compile_error_is_a_load_stage_failure(pool):
    task = resolve_task("relu")
    bad = get_backend("tilelang-c").initial_sources(task)["source"].replace(
        "T.max(X[bx * block + i]", "T.max(Q[bx * block + i]")
    res = _check(pool, task, {"source": bad}, {"B": 5, "D": 77})
    assert res["stage"] == "load" and not res["ok"] and "Q" in res["error"]


def test_wrong_kernel_is_caught(pool):
    task = resolve_task("relu")
    bad = get_backend("tilelang-c").initial_sources(task)["source"].replace(
        "T.cast(0, dtype)", "T.cast(0.5, dtype)")
    res = _check(pool, task, {"source": bad}, {"B": 5, "D": 77})
    assert res["stage"] == "compare" and not res["ok"] and res["max_abs_err"] > 0.1


def test_a_compile_error_names_the_compilers_own_error(pool):
    """Queue round rt63 (max_dim on tilelang-c): `T.max` in `T.vectorized`
    lowers to a `?:` on two float4 structs that g++ rejects; the load error held
    TileLang's command and the generated code but not g++'s message, which
    went to the process's stderr. It now comes right after the first line."""
    task = resolve_task("max_dim")
    src = get_backend("tilelang-c").initial_sources(task)["source"]
    loop = "                    for j in T.serial(d):\n                        top = T.max(top, X[b * rpb + i, j])\n"
    assert 'acc = T.alloc_var("float32")' in src and loop in src
    bad = src.replace('acc = T.alloc_var("float32")', 'acc = T.alloc_local((4,), "float32")').replace(
        loop, "                    for j in T.serial(d // 4):\n"
              "                        for k in T.vectorized(4):\n"
              "                            acc[k] = T.max(acc[k], X[b * rpb + i, j * 4 + k])\n"
              "                    for k in T.serial(4):\n"
              "                        top = T.max(top, acc[k])\n")
    # at D=512 the lanes are vectorized (float4); at D=77 TileLang finds no plan and emits a serial loop
    res = _check(pool, task, {"source": bad}, {"B": 8, "D": 512})
    assert res["stage"] == "load" and not res["ok"], res
    head, errors = res["error"].split("\n", 2)[:2], res["error"]
    assert head[0].startswith("first call (kernel compilation) raised RuntimeError: Compilation Failed!"), head
    assert head[1] == "the compiler's errors:", head
    assert "kernel.cpp:" in errors and "error: no match for" in errors and "float4" in errors, errors
    assert errors.index("no match for") < errors.index("the generated code:") < errors.index("main_kernel")


def test_a_forged_compilation_failure_runs_no_other_program(tmp_path):
    """The compiler's errors are had by running TileLang's failed command again
    (compiler_errors.compiler_output); a message the candidate raised itself,
    naming another program, runs nothing."""
    from kstrata.backends.tilelang.compiler_errors import compiler_output

    src = tmp_path / "k.cpp"
    src.write_text("int main( {}\n")
    mark = tmp_path / "ran"
    forged = f"Compilation Failed! {['/bin/sh', '-c', f'touch {mark}', str(src)]!r}\n"
    assert compiler_output(forged) == "" and not mark.exists()
    assert compiler_output("Compilation Failed! ['g++', '-c', '/etc/hostname.cpp']\n") == ""  # no such temp source
