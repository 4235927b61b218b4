"""``kstrata report RUN_DIR``: write the self-contained HTML report."""

from __future__ import annotations

from pathlib import Path

import typer

from kstrata.cli.bench import bench_errors
from kstrata.report.html import write_report
from kstrata.shellarg import arg


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to ``app``."""

    @app.command("report")
    def report(
        run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A bench directory or an optimize run directory."),
        out: Path | None = typer.Option(None, "--out", "-o", help="HTML file (default RUN_DIR/report.html)."),
        count_initial: bool | None = typer.Option(None, "--count-initial/--no-count-initial",
                                                  help="Count the backend's starting point as a candidate "
                                                       "(default: yes for a run directory, no for a bench)."),
    ) -> None:
        """Write one self-contained HTML report of a bench or run directory."""
        from kstrata.cli.errors import OptionError
        from kstrata.store.run_store import writable

        with bench_errors():
            if out is None and run_dir.is_dir() and not writable(run_dir):  # a read-only run (newcomer nc16)
                raise OptionError(f"{run_dir} is not writable (a read-only folder or another user's), so the "
                                  f"report cannot go to {run_dir / 'report.html'}; write it elsewhere: kstrata "
                                  f"report {arg(run_dir)} -o FILE.html")
            path = write_report(run_dir, out, count_initial=count_initial)
        typer.echo(str(path))
