"""Red-team round rt59: task files broken past their smallest shape, and what
a candidate reached outside the sandbox. Each test fails before its fix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

KSTRATA = str(Path(sys.executable).with_name("kstrata"))
HONEST_RELU = "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
#: a task whose smallest shape (N=8, where kstrata checks the reference) works and whose sweep shape
#: (N=64, where the judge verifies) does not; BODY is the rest of the file
_SIZED = ('import torch\nN = 64\nKSTRATA = {"shapes": {"nominal": {"N": 64}, "small": [{"N": 8}], '
          '"sweep": [{"N": 64}]}}\n')
BROKEN_PAST_SMALL = {
    "get_inputs_dict": ("class Model(torch.nn.Module):\n    def forward(self, x): return torch.relu(x)\n"
                        "def get_inputs(): return [torch.randn(N, 16)] if N < 40 else {'x': torch.randn(N, 16)}\n"
                        "def get_init_inputs(): return []\n", "get_inputs() returned a dict"),
    "forward_raises": ("class Model(torch.nn.Module):\n    def forward(self, x):\n"
                       "        if x.shape[0] > 40: raise ValueError('too big')\n        return torch.relu(x)\n"
                       "def get_inputs(): return [torch.randn(N, 16)]\ndef get_init_inputs(): return []\n",
                       "ValueError: too big"),
    "forward_dict": ("class Model(torch.nn.Module):\n"
                     "    def forward(self, x): return torch.relu(x) if x.shape[0] < 40 else {'a': x}\n"
                     "def get_inputs(): return [torch.randn(N, 16)]\ndef get_init_inputs(): return []\n",
                     "returned a dict"),
    "init_raises": ("class Model(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    "        if N > 40: raise KeyError('init')\n    def forward(self, x): return torch.relu(x)\n"
                    "def get_inputs(): return [torch.randn(N, 16)]\ndef get_init_inputs(): return []\n",
                    "KeyError: 'init'"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN_PAST_SMALL))
def test_a_task_broken_past_its_smallest_shape_is_checked_at_each_shape(tmp_path, kind):
    """The check of a task's reference ran at its smallest shape only: the
    judge then met the break at the sweep's shape, in its own process."""
    from kstrata.tasks.base import TaskError
    from kstrata.tasks.loader import check_reference, check_reference_at, load_task

    body, says = BROKEN_PAST_SMALL[kind]
    path = tmp_path / f"task_{kind}.py"
    path.write_text(_SIZED + body)
    task = load_task(path)
    check_reference(task)  # the smallest shape works
    check_reference_at(task, {"N": 8})
    with pytest.raises(TaskError, match="N': 64|get_inputs"):
        check_reference_at(task, {"N": 64})


def test_a_generator_from_get_inputs_is_caught_at_the_tasks_own_sizes(tmp_path):
    """A literal-shaped task's dims are inferred through ``list(get_inputs())``,
    so the check at the resized smallest shape passed a generator; the judge
    met it at the task's own sizes."""
    from kstrata.tasks.base import TaskError
    from kstrata.tasks.loader import check_reference, check_reference_at, load_task

    path = tmp_path / "task_gen.py"
    path.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return torch.relu(x)\n"
                    "def get_inputs(): return (torch.randn(8, 8) for _ in range(1))\n"
                    "def get_init_inputs(): return []\n")
    task = load_task(path)
    check_reference(task)
    with pytest.raises(TaskError, match="generator"):
        check_reference_at(task, None)


@pytest.mark.parametrize("kind", ["get_inputs_dict", "forward_dict"])
def test_eval_of_a_task_broken_past_its_smallest_shape_is_one_clear_error(tmp_path, kind):
    """``kstrata eval``: exit 2 and ``error: ...`` naming the file and the
    shape, not a ``VerifierError`` traceback (exit 1)."""
    body, says = BROKEN_PAST_SMALL[kind]
    task, cand = tmp_path / f"task_{kind}.py", tmp_path / "cand.py"
    task.write_text(_SIZED + body)
    cand.write_text(HONEST_RELU)
    p = subprocess.run([KSTRATA, "eval", str(task), str(cand), "--backend", "pytorch", "--no-time", "--scope",
                        "small"], capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    assert p.returncode == 2 and "Traceback" not in out, (p.returncode, out[-3000:])
    assert says in out and str(task) in out, out[-3000:]


def test_an_output_path_under_a_file_is_one_clear_error(tmp_path):
    """``kstrata import -o FILE`` (and ``-o FILE/sub``, ``report -o FILE/x.html``)
    ended in a ``FileExistsError``/``NotADirectoryError`` traceback, exit 1."""
    kernel, taken = tmp_path / "k.py", tmp_path / "taken"
    kernel.write_text("import triton\n\nclass ModelNew:\n    pass\n")
    taken.write_text("a file, not a folder\n")
    for out in (taken, taken / "sub"):
        p = subprocess.run([KSTRATA, "import", str(kernel), "-t", "relu", "-b", "triton-interp", "-o", str(out)],
                           capture_output=True, text=True, timeout=300)
        text = p.stdout + p.stderr
        assert p.returncode == 2 and "Traceback" not in text and "give another path" in text, (p.returncode,
                                                                                               text[-2000:])
    assert taken.read_text() == "a file, not a folder\n"


def test_path_errors_are_user_errors_and_other_os_errors_are_not():
    """The kind, for every command under ``user_errors``: an ``OSError`` on a
    path that cannot be used is one ``error:`` line (exit 2); an I/O error
    without a path stays a bug's traceback."""
    import errno

    import typer

    from kstrata.cli.errors import path_error, user_errors

    for code in (errno.EEXIST, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EROFS):
        with pytest.raises(typer.Exit) as ex, user_errors():
            raise OSError(code, "bad", "/some/path")
        assert ex.value.exit_code == 2
        assert path_error(OSError(code, "bad", "/some/path")).startswith("/some/path: bad;")
    with pytest.raises(OSError), user_errors():
        raise OSError(errno.EIO, "I/O error", "/some/path")
    with pytest.raises(PermissionError), user_errors():
        raise PermissionError(errno.EACCES, "no path given")


@pytest.mark.parametrize("formula", ["N / 0", "log2(N - 64)", "N ** N ** N", "1 << 10 ** 9", "1e308 * N", "min()"])
def test_a_flops_formula_without_a_finite_value_is_a_task_error(tmp_path, formula):
    """A task's ``flops`` formula was evaluated as exact Python arithmetic: a
    division by zero ended ``kstrata eval`` in a ``ZeroDivisionError``
    traceback, and ``N ** N ** N`` never ended (CPU and memory held). Each is
    now a TaskError naming the file and the formula, at once."""
    import time

    from kstrata.tasks.base import TaskError
    from kstrata.tasks.loader import load_task

    path = tmp_path / "task_formula.py"
    path.write_text(f"import torch\nN = 64\nKSTRATA = {{'flops': {formula!r}}}\n"
                    "class Model(torch.nn.Module):\n    def forward(self, x): return torch.relu(x)\n"
                    "def get_inputs(): return [torch.randn(N, 16)]\ndef get_init_inputs(): return []\n")
    t0 = time.monotonic()
    try:
        task = load_task(path)  # a constant power too large is refused here already
    except TaskError as e:
        assert "flops" in str(e), e
        return
    with pytest.raises(TaskError, match="flops formula"):
        task.flops({"N": 64})
    assert time.monotonic() - t0 < 30


def test_eval_of_a_task_whose_flops_formula_divides_by_zero_is_one_clear_error(tmp_path):
    task, cand = tmp_path / "task_div0.py", tmp_path / "cand.py"
    task.write_text("import torch\nN = 64\nKSTRATA = {'flops': 'N / (N - N)'}\n"
                    "class Model(torch.nn.Module):\n    def forward(self, x): return torch.relu(x)\n"
                    "def get_inputs(): return [torch.randn(N, 16)]\ndef get_init_inputs(): return []\n")
    cand.write_text(HONEST_RELU)
    p = subprocess.run([KSTRATA, "eval", str(task), str(cand), "--backend", "pytorch", "--scope", "small"],
                       capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    assert p.returncode == 2 and "Traceback" not in out and "flops formula" in out, (p.returncode, out[-3000:])
    assert "--timing-shape" not in out, out[-2000:]  # the task's fault, not the option's


@pytest.mark.parametrize("tolerance", ["{'atol': -1}", "{'rtol': 1e999}", "{'k': -4.0}", "{'floor': -0.5}",
                                       "{'kind': 'quant', 'cosine': 2}", "{'kind': 'quant', 'rel_l1': -1}"])
def test_a_tolerance_below_zero_or_infinite_is_refused(tmp_path, tolerance):
    """A negative ``atol`` made every candidate's output wrong (an honest ReLU
    read ``rejected`` with "max error 0"); ``1e999`` (infinity, which the
    KSTRATA literal takes) let any output pass. Refused when the task loads."""
    from kstrata.tasks.base import TaskError
    from kstrata.tasks.loader import load_task

    path = tmp_path / "task_tol.py"
    path.write_text(f"import torch\nN = 64\nKSTRATA = {{'tolerance': {tolerance}}}\n"
                    "class Model(torch.nn.Module):\n    def forward(self, x): return torch.relu(x)\n"
                    "def get_inputs(): return [torch.randn(N, 16)]\ndef get_init_inputs(): return []\n")
    with pytest.raises(TaskError, match="tolerance"):
        load_task(path)
    path.write_text(path.read_text().replace(tolerance, "{'atol': 1e-5, 'rtol': 0.001}"))
    assert load_task(path).meta.tolerance.atol == 1e-5


@pytest.mark.parametrize("command", ["optimize", "bench"])
def test_a_bad_config_file_is_refused_whatever_the_proposer(tmp_path, command):
    """``--config`` was read by the LLM proposers only: with the builtin one a
    file that is not TOML, or has unknown keys, was ignored without a word and
    the run went on with other settings than the user named."""
    bad = tmp_path / "kstrata.toml"
    bad.write_text("bogus_key = 1\n")
    args = (["optimize", "relu", "--backend", "triton-interp", "--out", str(tmp_path / "run")] if command == "optimize"
            else ["bench", "--backends", "triton-interp", "--tasks", "relu", "--out", str(tmp_path / "bench")])
    p = subprocess.run([KSTRATA, *args, "--budget", "evals=1", "--config", str(bad)], capture_output=True, text=True,
                       timeout=120)
    out = p.stdout + p.stderr
    assert p.returncode == 2 and "bogus_key" in out and "Traceback" not in out, (p.returncode, out[-2000:])
    assert not (tmp_path / "run").exists() and not (tmp_path / "bench" / "bench.db").exists()


@pytest.mark.parametrize("key", ["dist_inputs", "free_inputs", "fixed_inputs"])
def test_metadata_naming_an_input_past_the_end_is_refused(tmp_path, key):
    """``fixed_inputs: [9]`` on a task of one input was ignored without a word."""
    from kstrata.tasks.base import TaskError
    from kstrata.tasks.loader import check_reference, load_task

    path = tmp_path / f"task_{key}.py"
    body = ("class Model(torch.nn.Module):\n    def forward(self, x, s): return torch.relu(x) * s\n"
            "def get_inputs(): return [torch.randn(N, 16), 2]\ndef get_init_inputs(): return []\n")
    path.write_text(f"import torch\nN = 64\nKSTRATA = {{'{key}': [1, 2]}}\n" + body)
    with pytest.raises(TaskError, match=f"{key} names input 2"):
        check_reference(load_task(path))
    path.write_text(f"import torch\nN = 64\nKSTRATA = {{'{key}': [1]}}\n" + body)
    check_reference(load_task(path))


def test_a_linked_folder_in_a_run_directory_is_never_written_through(tmp_path):
    """A run directory from elsewhere with ``candidates -> OUTSIDE`` (or
    ``best -> /etc``, which ``optimize --resume`` wrote ``source.py`` into):
    kstrata's writes there replace the link with a folder of its own, and
    nothing reaches the linked folder."""
    import hashlib

    from kstrata.search.candidate import content_hash, normalize_sources
    from kstrata.store import CandidateRecord, RunStore
    from kstrata.store.artifacts import UnsafeName, write_in_run

    class _Task:
        name, digest, path = "t", hashlib.sha256(b"t").hexdigest(), "t.py"

    outside = tmp_path / "outside"
    outside.mkdir()
    run = tmp_path / "run"
    with RunStore.create(run, {}) as store:
        task_id = store.ensure_task(_Task())
        (run / "candidates").mkdir(exist_ok=True)
        (run / "candidates").rmdir()
        (run / "candidates").symlink_to(outside)
        sources = normalize_sources({"schedule": "x = 1\n"})
        cand = CandidateRecord(hash=content_hash(sources, "fake", _Task.digest), sources=sources, level="schedule",
                               role="r", proposer="fake", parents=(), rationale="", router_reason="", metadata={},
                               backend="fake")
        assert store.add_candidate(cand, task_id)
    assert list(outside.iterdir()) == [], "a candidate's files were written through the link"
    assert (run / "candidates").is_dir() and not (run / "candidates").is_symlink()
    (run / "best").symlink_to(outside)
    write_in_run(run, run / "best" / "source.py", "kernel\n")
    assert list(outside.iterdir()) == [] and (run / "best" / "source.py").read_text() == "kernel\n"
    with pytest.raises(UnsafeName):
        write_in_run(run, tmp_path / "elsewhere.py", "x\n")


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_linked_run_lock_is_not_written_through(tmp_path, kind):
    """``run.lock -> ~/.bashrc`` in a run directory from elsewhere: taking the
    run's lock (``optimize --resume``, ``retime``) truncated the linked file
    and wrote a PID into it. The link is replaced by a file of the run's own."""
    from kstrata.store.lock import run_lock

    run, victim = tmp_path / "run", tmp_path / "victim.txt"
    run.mkdir()
    victim.write_text("precious\n")
    if kind == "symlink":
        (run / "run.lock").symlink_to(victim)
    else:
        (run / "run.lock").hardlink_to(victim)
    with run_lock(run, "kstrata optimize"):
        assert not (run / "run.lock").is_symlink() and (run / "run.lock").stat().st_nlink == 1
        assert "kstrata optimize" in (run / "run.lock").read_text()
    assert victim.read_text() == "precious\n"
