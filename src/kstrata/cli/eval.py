"""``kstrata eval TASK CANDIDATE_FILE --backend B``: verify one candidate file."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import typer
from rich.console import Console

from kstrata.cli.errors import err_console
from kstrata.backends.registry import UnknownBackendError, get_backend
from kstrata.tasks.base import TaskError
from kstrata.tasks.loader import resolve_task
from kstrata.verify import verify_candidate
from kstrata.verify.integrity.registry import UnknownPresetError

console = Console()


def register(app: typer.Typer) -> None:
    """Add the ``eval`` command to ``app``."""

    @app.command("eval")
    def eval_(
        task: str = typer.Argument(..., help="Suite task name or path to a task file."),
        candidate: Path = typer.Argument(..., help="Candidate file (KernelBench format, defines ModelNew)."),
        backend: str = typer.Option("pytorch", "--backend", "-b", help="Backend of the candidate."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
        preset: str = typer.Option("strict", "--preset", help="Integrity preset: strict or warn."),
        scope: str = typer.Option("full", "--scope", help="Hidden shapes: full (sweep) or small."),
        secret: str | None = typer.Option(None, "--secret", help="Run secret (default: random)."),
        timeout: float = typer.Option(600.0, "--timeout", help="Wall-clock limit in seconds."),
    ) -> None:
        """Verify CANDIDATE_FILE for TASK: prints the verdict, evidence and feedback."""
        try:
            t = resolve_task(task)
            if not candidate.is_file():
                raise FileNotFoundError(f"{candidate}: no such candidate file")
            get_backend(backend)
            if scope not in ("full", "small"):
                raise ValueError(f"unknown scope {scope!r}; choose full or small")
            ev = verify_candidate(t, backend, {"source": candidate.read_text()},
                                  secret=secret or secrets.token_hex(16), preset=preset,
                                  timeout_s=timeout, scope=scope)
        except (TaskError, UnknownBackendError, UnknownPresetError, FileNotFoundError, ValueError) as e:
            err_console.print(f"[bold red]error:[/] {e}", markup=True, highlight=False)
            raise typer.Exit(2) from None
        if as_json:
            typer.echo(json.dumps(ev.to_dict(), sort_keys=True))
        else:
            color = "green" if ev.correct else "red"
            console.print(f"[bold {color}]{ev.verdict.value}[/]" + (f"  check: {ev.check}" if ev.check else "")
                          + f"   ({ev.public_tests} public, {ev.hidden_tests} hidden tests, {ev.seconds:.2f} s)")
            for k, v in ev.evidence.items():
                console.print(f"  {k}: {v}", markup=False, highlight=False)
            for w in ev.warnings:
                console.print(f"  warning [{w['check']}]: {w['message']}", markup=False, highlight=False)
            for f in ev.feedback:
                console.print(f"  - [{f['kind']}/{f['level']}] {f['text']}", markup=False, highlight=False)
