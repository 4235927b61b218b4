"""The ``kstrata`` command. Each subcommand lives in its own module and
registers itself here; this file is only glue."""

from __future__ import annotations

import typer

import importlib
from typing import Any

import click
import typer
import typer.main

from kstrata import __version__

#: Every subcommand, in the order ``kstrata --help`` lists them: the module of
#: :mod:`kstrata.cli` that registers it (``register(app)``, or its sub-app
#: ``app`` for a group) and its one-line help. A module is imported only when
#: one of its commands is run or asked for its own help, so ``kstrata --help``
#: and the light commands (``tree``, ``show``) do not import torch or a
#: backend (tests/cli/test_cli_start.py keeps the lines equal to the commands' own).
COMMANDS: dict[str, tuple[str, str]] = {
    "env": ("env", "Versions of Python, torch and each backend library; devices; usable backends."),
    "eval": ("eval", "Verify CANDIDATE (a file or a candidate directory) for TASK: prints the verdict, evidence and feedback."),
    "setup": ("setup", "Create the TileLang environment (under $KSTRATA_ENV_DIR or ~/.cache/kstrata/envs) and "
                       "check that the main environment imports TVM."),
    "import": ("import_", "Import an existing kernel file as a candidate for TASK on BACKEND."),
    "mcp": ("mcp", "Start an MCP server: list/show tasks, evaluate, profile and submit candidates, get the best, "
                   "and the budget left; every call is recorded in the run store."),
    "baseline": ("baseline", "Time eager PyTorch, torch.compile and (TVM) the MetaSchedule-tuned baseline."),
    "optimize": ("optimize", "Grow a tree of candidates for TASK on BACKEND under a budget; write the best."),
    "tree": ("optimize", "The candidate lineage of a run: level, role, verdict, speedup, router reason."),
    "show": ("optimize", "One candidate's sources, verdict, timings and feedback (default: the run's best)."),
    "bench": ("bench", "Run a benchmark into OUT (one optimize run per task, backend and proposer)."),
    "report": ("report", "Write one self-contained HTML report of a bench or run directory."),
    "retime": ("retime", "Re-time candidates of a run in a longer round (the judge's timing path); update best/ "
                         "and the summary."),
    "export": ("export", "Write the run's best kernel as an importable module (KernelModule, a torch.nn.Module)."),
    "compare": ("compare", "Print the metrics of A and B with 95% intervals, B - A and whether the intervals "
                           "overlap."),
    "tasks": ("tasks", "List and inspect tasks (the shipped suite or a directory)."),
    "rules": ("rules", "The integrity rules a candidate on BACKEND is held to (imports, compute, state, outputs)."),
    "memory": ("memory", "The agents' memory of transformations that worked."),
}


class _Listed(click.Command):
    """A subcommand as ``kstrata --help`` lists it before its module is imported."""


def load_commands(name: str) -> dict[str, click.Command]:
    """The click commands that :data:`COMMANDS`' module for ``name``
    registers (importing it), by name; e.g. ``optimize`` gives ``optimize``,
    ``tree`` and ``show``.

    Raises
    ------
    KeyError
        If ``name`` is not a kstrata subcommand.
    """
    module = importlib.import_module(f"kstrata.cli.{COMMANDS[name][0]}")
    holder = typer.Typer()
    holder.callback()(lambda: None)  # a group even when the module registers one command
    if hasattr(module, "register"):
        module.register(holder)
    else:
        holder.add_typer(module.app, name=name)
    return dict(typer.main.get_command(holder).commands)


class _Commands(dict):
    """The group's commands: :class:`_Listed` stand-ins until one is looked
    up by name (``commands[name]``) or resolved to run; then its module's."""

    def load(self, name: str) -> None:
        if isinstance(dict.get(self, name), _Listed):
            for n, cmd in load_commands(name).items():
                if isinstance(dict.get(self, n), _Listed):
                    dict.__setitem__(self, n, cmd)

    def __getitem__(self, name: str) -> click.Command:
        self.load(name)
        return dict.__getitem__(self, name)


class LazyGroup(typer.core.TyperGroup):
    """kstrata's top-level group: lists :data:`COMMANDS` from their one-line
    help and imports a command's module only when that command is resolved."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.commands = _Commands({n: _Listed(n, help=text) for n, (_, text) in COMMANDS.items()})

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        if args and args[0] in self.commands:
            self.commands.load(args[0])
        return super().resolve_command(ctx, args)


def _hide_flag_types() -> None:
    """Show no ``<bool>`` type after on/off flags in ``--help`` (typer's rich
    help prints one for every flag, ``--help`` included; a flag takes no value)."""
    option = getattr(typer.core, "TyperOption", None)
    shown = getattr(option, "display_type_rich", None)
    if shown is None or getattr(shown, "_kstrata", False):
        return

    def display_type_rich(self, ctx):  # noqa: ANN001, ANN202 - typer's signature
        return None if getattr(self, "is_flag", False) else shown(self, ctx)

    display_type_rich._kstrata = True
    option.display_type_rich = display_type_rich


_hide_flag_types()

app = typer.Typer(
    name="kstrata", cls=LazyGroup,
    help="LLM-driven kernel optimization with a verifier and timer you can trust.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kstrata {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    unsafe_no_sandbox: bool = typer.Option(
        False, "--unsafe-no-sandbox",
        help="Run candidate code without the OS sandbox where none can be made (bubblewrap missing). "
             "Candidate code is untrusted: use only for your own code on a machine you can lose."),
) -> None:
    """kstrata: tasks, verifier, timer and optimizer for GPU/CPU kernels."""
    import os

    if os.environ.get("KSTRATA_SHAPES", "").strip():  # torch is imported only to check a value that is set
        from kstrata.cli.errors import user_errors
        from kstrata.tasks.scaled import shape_mode

        with user_errors():
            shape_mode()  # a bad value is one error here, not a task file's fault later
    if unsafe_no_sandbox:

        from kstrata.sandbox.policy import UNSAFE_ENV

        os.environ[UNSAFE_ENV] = "1"
