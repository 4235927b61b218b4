"""The ``kstrata`` command. Each subcommand lives in its own module and
registers itself here; this file is only glue."""

from __future__ import annotations

import typer

from kstrata import __version__
from kstrata.cli import baseline as baseline_cmd
from kstrata.cli import bench as bench_cmd
from kstrata.cli import compare as compare_cmd
from kstrata.cli import env as env_cmd
from kstrata.cli import eval as eval_cmd
from kstrata.cli import export as export_cmd
from kstrata.cli import mcp as mcp_cmd
from kstrata.cli import memory as memory_cmd
from kstrata.cli import report as report_cmd
from kstrata.cli import retime as retime_cmd
from kstrata.cli import optimize as optimize_cmd
from kstrata.cli import import_ as import_cmd
from kstrata.cli import setup as setup_cmd
from kstrata.cli import tasks as tasks_cmd

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
    name="kstrata",
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
    if unsafe_no_sandbox:
        import os

        from kstrata.sandbox.policy import UNSAFE_ENV

        os.environ[UNSAFE_ENV] = "1"


app.add_typer(tasks_cmd.app, name="tasks")
app.add_typer(memory_cmd.app, name="memory")
env_cmd.register(app)
eval_cmd.register(app)
setup_cmd.register(app)
import_cmd.register(app)
mcp_cmd.register(app)
baseline_cmd.register(app)
optimize_cmd.register(app)
bench_cmd.register(app)
report_cmd.register(app)
retime_cmd.register(app)
export_cmd.register(app)
compare_cmd.register(app)
