"""``kstrata mcp``: serve kstrata's tasks and evaluator to an external agent over MCP."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from kstrata.cli.errors import MAX_SECONDS, OptionError, check_number, print_error, user_errors
from kstrata.cli.optimize import TIMING_SHAPE_HELP


def mcp(
    transport: str = typer.Option("stdio", "--transport", help="stdio, or http (streamable HTTP at http://HOST:PORT/mcp)."),
    port: int = typer.Option(8000, "--port", help="Port of the http transport."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address of the http transport."),
    run: Path | None = typer.Option(None, "--run", help="Run directory: opened if it holds a run, created otherwise (default runs/mcp-DATE-TIME)."),
    backend: str = typer.Option("pytorch", "--backend", help="Default backend of the tools."),
    tasks: Path | None = typer.Option(None, "--tasks", help="A directory of task files to serve instead of the suite."),
    max_calls: int | None = typer.Option(None, "--max-calls", help="Tool calls allowed (budget_left is free)."),
    max_evaluations: int | None = typer.Option(None, "--max-evaluations", help="Candidates verified (evaluate, profile, submit)."),
    max_wall: float | None = typer.Option(None, "--max-wall", help="Seconds of evaluation allowed."),
    workers: int = typer.Option(1, "--workers", help="Worker processes for verification and timing."),
    no_timing: bool = typer.Option(False, "--no-timing", help="Do not time correct candidates in evaluate/submit."),
    timing_reps: int | None = typer.Option(None, "--timing-reps", help="Quick timing: at most this many pairs, no re-measurement (default: the timer's full protocol)."),
    timing_shape: str = typer.Option("auto", "--timing-shape", help=TIMING_SHAPE_HELP),
) -> None:
    """Start an MCP server: list/show tasks, evaluate, profile and submit candidates,
    get the best, and the budget left; every call is recorded in the run store."""
    from kstrata.serve.mcp_server import Limits, serve
    from kstrata.serve.service import ServeError, quick_timing
    from kstrata.store import StoreError

    if transport not in ("stdio", "http"):
        print_error(f"unknown transport {transport!r}; use stdio or http")
        raise typer.Exit(2)
    run_dir = run or Path("runs") / time.strftime("mcp-%Y%m%d-%H%M%S")
    limits = Limits(calls=max_calls, evaluations=max_evaluations, wall_s=max_wall)
    with user_errors():
        from kstrata.sandbox.policy import require

        require()  # submissions run only sandboxed, unless --unsafe-no-sandbox
        check_number("--max-wall", max_wall, unit=" s", maximum=MAX_SECONDS)
        check_number("--max-calls", max_calls, strict=False)
        check_number("--max-evaluations", max_evaluations, strict=False)
        check_number("--workers", workers, minimum=1, strict=False)
        check_number("--timing-reps", timing_reps, minimum=1, strict=False)
        if not 0 <= port <= 65535:
            raise OptionError(f"--port {port}: a TCP port is 0..65535")
        try:
            serve(run_dir, transport=transport, host=host, port=port, backend=backend,
                  task_dir=tasks, limits=limits, workers=workers, time_candidates=not no_timing,
                  timing=quick_timing(timing_reps) if timing_reps else None, timing_shape=timing_shape)
        except (ServeError, StoreError) as e:
            print_error(e)
            raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    """Add ``kstrata mcp`` to ``app``."""
    app.command("mcp")(mcp)
