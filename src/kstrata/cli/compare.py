"""``kstrata compare RUN_A RUN_B``: metrics side by side, with differences and overlap."""

from __future__ import annotations

from pathlib import Path

import typer

from kstrata.cli.errors import Console
from kstrata.bench.compare import compare_table
from kstrata.cli.bench import bench_errors

console = Console()  # the terminal's width (Console.PIPE_WIDTH columns when not a terminal)


def register(app: typer.Typer) -> None:
    """Add the ``compare`` command to ``app``."""

    @app.command("compare")
    def compare(
        run_a: Path = typer.Argument(..., metavar="RUN_A", help="Bench or run directory A."),
        run_b: Path = typer.Argument(..., metavar="RUN_B", help="Bench or run directory B."),
        count_initial: bool = typer.Option(False, "--count-initial",
                                           help="Count the backend's starting point as a candidate."),
    ) -> None:
        """Print the metrics of A and B with 95% intervals, B - A and whether the intervals overlap."""
        with bench_errors():
            table = compare_table(run_a, run_b, count_initial=count_initial)
        console.print(table)
