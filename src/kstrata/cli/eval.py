"""``kstrata eval TASK CANDIDATE_FILE --backend B``: verify one candidate file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from kstrata.api import evaluate_sources, read_candidate
from kstrata.cli.errors import check_number, err_console
from kstrata.backends.envs import EnvMissingError
from kstrata.backends.registry import UnknownBackendError, get_backend
from kstrata.backends.workers import pool_for
from kstrata.tasks.base import TaskError
from kstrata.tasks.loader import resolve_task
from kstrata.sandbox.policy import SandboxUnavailable
from kstrata.verify.integrity.registry import UnknownPresetError

console = Console()


def _timing_line(t: dict) -> str:
    if "skipped" in t or "error" in t:
        return t.get("skipped") or t["error"]
    line = f"{t['candidate_ms']:.4f} ms vs eager {t['baseline_ms']:.4f} ms"
    if t.get("speedup") is not None:
        lo, hi = t["speedup_ci"]
        line += f"; speedup {t['speedup']:.3f}x [{lo:.3f}, {hi:.3f}] ({t['confidence']:.0%} CI)"
    if t.get("roofline_fraction") is not None:
        line += f"; {t['bound']}-bound at {100 * t['roofline_fraction']:.1f}% of the roofline"
    if t.get("suspicious"):
        line += "; SUSPICIOUS: " + "; ".join(map(str, t["suspicious"]))
    line += f" ({t['method']}, {t['pairs']} pairs)"
    return line + (f"; timed at {', '.join(f'{k}={v}' for k, v in t['shape'].items())}" if t.get("shape") else "")


def headline(ev: Any) -> str:
    """The verdict's one-line message (``evidence["message"]``), saying how many
    wrong outputs are NaN/Inf where the oracle is finite: the judge's "max
    error" covers the finite elements only, so "max error 1.08e-70" alone
    would hide that every wrong element is NaN."""
    evidence = ev.evidence or {}
    msg = str(evidence.get("message", ""))
    stats = evidence.get("stats") if isinstance(evidence.get("stats"), dict) else {}
    nonfinite, wrong = stats.get("nonfinite_wrong") or 0, stats.get("wrong")
    if not nonfinite or "NaN" in msg:
        return msg
    total = stats.get("total", "?")
    if nonfinite == wrong:
        return f"{wrong} of {total} elements outside tolerance, all NaN/Inf where the oracle is finite"
    return (f"{wrong} of {total} elements outside tolerance: {nonfinite} NaN/Inf where the oracle is finite, "
            f"max error {stats.get('max_err', float('nan')):.3g} over the rest")


def register(app: typer.Typer) -> None:
    """Add the ``eval`` command to ``app``."""

    @app.command("eval")
    def eval_(
        task: str = typer.Argument(..., help="Suite task name or path to a task file."),
        candidate: Path = typer.Argument(..., help="Candidate file (KernelBench format, defines ModelNew), or a run's best/ or candidates/<hash> directory (or one level file in it)."),
        backend: str | None = typer.Option(None, "--backend", "-b", help="Backend of the candidate (default: the run's for a run's best/ or candidate, else pytorch)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
        preset: str = typer.Option("strict", "--preset", help="Integrity preset: strict or warn."),
        scope: str = typer.Option("full", "--scope", help="Hidden shapes: full (sweep) or small."),
        secret: str | None = typer.Option(None, "--secret", help="Run secret (default: random)."),
        timeout: float = typer.Option(600.0, "--timeout", help="Wall-clock limit in seconds of the whole verification: the judge's reference and float64 oracle at every test shape count, not only the candidate's calls."),
        time_it: bool = typer.Option(True, "--time/--no-time", help="Time a correct candidate against eager PyTorch (paired, at --timing-shape)."),
        timing_shape: str = typer.Option("auto", "--timing-shape", help="Shape the candidate is timed (and verified) at: auto (fit on CPU backends, nominal on GPUs), nominal, fit (the nominal shape halved until one call is at most 0.25 GFLOP and 16 MB), or NAME=INT,..."),
        budget_ms: float = typer.Option(1000.0, "--budget-ms", help="Paired timing budget in ms."),
    ) -> None:
        """Verify CANDIDATE_FILE for TASK: prints the verdict, evidence and feedback."""
        try:
            check_number("--timeout", timeout, unit=" s")
            check_number("--budget-ms", budget_ms, unit=" ms")
            t = resolve_task(task)
            sources, backend = read_candidate(candidate, backend)
            b = get_backend(backend)
            av = b.availability()
            if not av.usable:
                raise ValueError(f"backend {backend} is not usable here: {av.reason}")
            if scope not in ("full", "small"):
                raise ValueError(f"unknown scope {scope!r}; choose full or small")
            from kstrata.cli.optimize import _timing_shape

            shape = _timing_shape(timing_shape, t, b, None)  # an OptionError is a ValueError
            pool = pool_for(b)
        except (TaskError, UnknownBackendError, UnknownPresetError, FileNotFoundError, ValueError,
                EnvMissingError) as e:
            err_console.print(f"[bold red]error:[/] {e}", markup=True, highlight=False)
            raise typer.Exit(2) from None
        try:
            try:
                ev, timing = evaluate_sources(t, b, sources, pool, preset=preset, scope=scope, secret=secret,
                                              timeout_s=timeout, time=time_it, budget_ms=budget_ms,
                                              timing_shape=shape)
            except (UnknownPresetError, SandboxUnavailable, TaskError) as e:  # TaskError: the reference fails
                err_console.print(f"[bold red]error:[/] {e}", markup=True, highlight=False)
                raise typer.Exit(2) from None
        finally:
            pool.close()
        from kstrata.backends.pytorch_cuda import device_line

        where = device_line(b)
        if as_json:
            typer.echo(json.dumps({**ev.to_dict(), "message": headline(ev), "timing": timing,
                                   "device": where.removeprefix("device: ")}, sort_keys=True))
        else:
            console.print(where, markup=False, highlight=False)
            color = "green" if ev.correct else "red"
            console.print(f"[bold {color}]{ev.verdict.value}[/]" + (f"  check: {ev.check}" if ev.check else "")
                          + f"   ({ev.public_tests} public, {ev.hidden_tests} hidden tests, {ev.seconds:.2f} s)")
            if headline(ev):
                console.print(f"  message: {headline(ev)}", markup=False, highlight=False)
            for k, v in ev.evidence.items():
                if k != "message":
                    console.print(f"  {k}: {v}", markup=False, highlight=False)
            for w in ev.warnings:
                console.print(f"  warning [{w['check']}]: {w['message']}", markup=False, highlight=False)
            for f in ev.feedback:
                console.print(f"  - [{f['kind']}/{f['level']}] {f['text']}", markup=False, highlight=False)
            if timing is not None:
                console.print("  timing: " + _timing_line(timing), markup=False, highlight=False)
