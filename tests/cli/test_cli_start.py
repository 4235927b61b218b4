"""The CLI starts fast: ``kstrata --help`` and the light commands (``tree``,
``show``) import no torch, TVM or backend (each is seconds of CPU at start; on a
busy 2-core machine the newcomer waited 17-24 s for ``kstrata --help``). A
subcommand's module is imported only when it runs (:class:`kstrata.cli.main.LazyGroup`);
its line in ``kstrata --help`` is kept equal to its own help."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import typer.main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask  # noqa: E402

from kstrata.cli.main import COMMANDS, app, load_commands  # noqa: E402
from kstrata.search import Budget, SearchSettings, optimize  # noqa: E402

HEAVY = ("torch", "tvm", "triton", "tilelang", "numpy", "jinja2")


def _run_cli(*args: str, cwd: Path | None = None) -> tuple[str, list[str]]:
    """``kstrata ARGS`` in a fresh interpreter: its output and the heavy modules it imported."""
    code = ("import sys\nsys.argv = ['kstrata', *sys.argv[1:]]\nfrom kstrata.cli.main import app\n"
            "try:\n    app()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            f"print('HEAVY', sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                         env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr[-3000:]
    *text, heavy = out.stdout.rstrip("\n").split("\n")
    return "\n".join(text), eval(heavy.removeprefix("HEAVY "))  # noqa: S307 - our own printed list


def test_help_lists_every_command_without_importing_torch_or_a_backend():
    text, heavy = _run_cli("--help")
    assert heavy == []
    for name, (_, line) in COMMANDS.items():
        assert f" {name} " in text and line.split()[0] in text


def test_tree_and_show_of_a_run_import_no_torch(tmp_path):
    run = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=3),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0)).run_dir
    best = json.loads((run / "summary.json").read_text())["best"]["hash"]
    text, heavy = _run_cli("tree", str(run))
    assert best[:8] in text and heavy == []
    text, heavy = _run_cli("show", str(run))
    assert best in text and heavy == []


def test_the_help_lines_are_the_commands_own_and_every_command_is_listed():
    registered = {}
    for name in COMMANDS:
        registered.update(load_commands(name))
    assert set(registered) == set(COMMANDS)
    for name, cmd in registered.items():
        assert " ".join((cmd.help or "").split()) == COMMANDS[name][1], name
    group = typer.main.get_command(app)
    assert [p.name for p in group.commands["eval"].params][:2] == ["task", "candidate"]  # looked up: the real one


def _run_cli_error(*args: str) -> tuple[int, str, list[str]]:
    """``kstrata ARGS`` that should fail on its arguments: exit code, stderr, heavy modules imported."""
    code = ("import sys\nsys.argv = ['kstrata', *sys.argv[1:]]\nfrom kstrata.cli.main import app\n"
            "try:\n    app()\nexcept SystemExit as e:\n    rc = e.code\nelse:\n    rc = 0\n"
            f"print('HEAVY', sorted(m for m in {HEAVY!r} if m in sys.modules), rc)\n")
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "COLUMNS": "200"})
    *_, last = out.stdout.rstrip("\n").split("\n")
    heavy, rc = last.removeprefix("HEAVY ").rsplit(" ", 1)
    return int(rc), out.stderr, eval(heavy)  # noqa: S307 - our own printed list


def test_option_typos_are_told_before_torch_or_tvm_is_imported(tmp_path):
    # The newcomer waited 7-18 s for "--budget evals must be a number" on a busy machine: the task and the
    # backend (torch, TVM) were loaded before the options were read.
    cases = [
        (("optimize", "rmsnorm", "--budget", "evals=abc"), "--budget evals must be a number"),
        (("optimize", "rmsnorm", "--budget", "time=1"), "--budget key 'time' unknown"),
        (("optimize", "rmsnorm", "--policy", "bogus"), "unknown --policy 'bogus'"),
        (("optimize", "rmsnorm", "--resume", str(tmp_path / "none")), "no run there"),
        (("retime", str(tmp_path / "none")), "no such directory"),
        (("optimize", "rmsnorm", "--backend", "cuda"), "did you mean tvm-cuda or pytorch-cuda"),  # registry: 2.6 s
    ]
    for args, message in cases:
        rc, err, heavy = _run_cli_error(*args)
        assert rc == 2 and message in err, (args, rc, err[-2000:])
        assert heavy == [], (args, heavy)
