"""``kstrata baseline TASK --backend B``: build, time and cache the baselines.

Eager PyTorch and ``torch.compile`` always; for ``tvm-*`` backends also the
MetaSchedule-tuned TVM implementation (``--trials``). The work runs in a
killable worker (``kstrata.execute``) unless ``--in-process``.
"""

from __future__ import annotations

import json

import typer
from rich.table import Table

from kstrata.backends.registry import get_backend
from kstrata.cli.errors import MAX_SECONDS, Console, check_number, user_errors
from kstrata.measure.baselines import BaselineResult, kinds_for, run_baselines
from kstrata.measure.roofline import cache_dir
from kstrata.measure.timing import TimingConfig
from kstrata.tasks.loader import resolve_task

console = Console()


def untrusted_why(m: dict) -> list[str]:
    """Why a baseline's timing (a :class:`~kstrata.measure.timing.Measurement`
    as a dict) is not to be believed, as ``eval`` and ``optimize`` mark theirs
    (:func:`kstrata.measure.retime.doubtful`): still noisy after its
    re-measurements, or a suspicious note (``contended: ...``), each said
    without a run's advice (:func:`kstrata.search.views.timing_reason`);
    ``[]`` for a trusted timing."""
    from kstrata.search.views import timing_reason

    why = [f"still noisy after {m.get('remeasured') or 0} re-measurement(s)"] if m.get("noisy") else []
    return why + [timing_reason(str(n)) for n in m.get("suspicious") or ()]


def _table(task: str, backend: str, results: list[BaselineResult]) -> Table:
    t = Table(title=f"baselines of {task} on {backend}",
              caption="vs eager: the median of per-pair ratios against eager timed beside each baseline (not the "
                      "ratio of the medians shown)")
    eager = next((r for r in results if r.kind == "eager" and r.available), None)
    eager_doubt = eager is not None and bool(untrusted_why(eager.measurement or {}))
    t.add_column("baseline", no_wrap=True)
    for col in ("median\nms", "IQR\nms", "min\nms"):
        t.add_column(col, no_wrap=True, justify="right")
    t.add_column("vs eager\n(95% CI)")
    t.add_column("pairs", no_wrap=True, justify="right")
    t.add_column("notes")
    for r in results:
        if not r.available:
            t.add_row(r.kind, "-", "-", "-", "-", "-", "[yellow]unavailable[/] (reason below)")
            continue
        m = r.measurement or {}
        c, s = m["candidate"], m.get("speedup")
        vs = f"{s['point']:.3f}x [{s['low']:.3f}, {s['high']:.3f}]" if s else "1 (reference)"
        # UNTRUSTED says why below the table; a trusted timing keeps its re-measurement count here
        notes = ["[bold yellow]UNTRUSTED[/]"] if untrusted_why(m) else (
            [f"remeasured {m['remeasured']}x"] if m.get("remeasured") else [])
        if eager_doubt and s and not untrusted_why(m):  # its ratio rests on eager's doubtful timing too
            notes.append("[yellow]ratio vs a doubtful eager[/]")
        notes += [f"trials={r.trials}"] if r.trials else []
        notes += ["cached"] if r.cached else []
        t.add_row(r.kind, f"{c['median']:.4g}", f"{c['iqr']:.2g}", f"{c['min']:.4g}", vs,
                  str(m["reps"]), ", ".join(notes))
    return t


def untrusted_lines(results: list[BaselineResult], budget_ms: float) -> list[str]:
    """Below the table, once per reason: which baselines' timings are not
    trusted and why, and what to do (every speedup is paired with eager, so an
    untrusted eager leaves every interval in doubt)."""
    whys: dict[str, list[str]] = {}
    for r in results:
        for why in untrusted_why(r.measurement or {}) if r.available else ():
            whys.setdefault(why, []).append(r.kind)
    if not whys:
        return []
    lines = [f"UNTRUSTED timing of {', '.join(kinds)}: {why}" for why, kinds in whys.items()]
    cached = any(r.cached for r in results if r.available and untrusted_why(r.measurement or {}))
    return lines + [f"their medians and intervals are not to be believed: run kstrata baseline again on a quieter "
                    f"machine{' with --no-cache (these were read from the cache)' if cached else ''}, or with a "
                    f"longer timing (--budget-ms, now {budget_ms:g})"]


def register(app: typer.Typer) -> None:
    """Add the ``baseline`` command to ``app``."""

    @app.command("baseline")
    def baseline(
        task: str = typer.Argument(..., metavar="TASK", help="Suite task name or path to a task file."),
        backend: str = typer.Option("pytorch", "--backend", "-b", help="Backend the baselines are for."),
        trials: int = typer.Option(64, "--trials", help="MetaSchedule trial budget (tvm-* backends)."),
        shape: str = typer.Option("auto", "--shape", "--timing-shape", help="Shape to time at: auto (fit on CPU backends, nominal on GPUs, as optimize and eval), nominal, fit, or NAME=INT,... (e.g. B=64,D=512)."),
        budget_ms: float = typer.Option(1000.0, "--budget-ms", help="Timed budget per baseline, ms."),
        threads: int | None = typer.Option(None, "--threads", help="Intra-op threads (default: all)."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Measure again, ignoring the cache."),
        in_process: bool = typer.Option(False, "--in-process", help="Run here, not in a worker."),
        timeout_s: float = typer.Option(3600.0, "--timeout", help="Worker wall-clock limit, s."),
        as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    ) -> None:
        """Time eager PyTorch, torch.compile and (TVM) the MetaSchedule-tuned baseline."""
        with user_errors():
            check_number("--timeout", timeout_s, unit=" s", maximum=MAX_SECONDS)
            check_number("--budget-ms", budget_ms, unit=" ms")
            check_number("--trials", trials, strict=False)
            check_number("--threads", threads, minimum=1, strict=False)
            t = resolve_task(task)
            from kstrata.cli.optimize import _timing_shape

            shp = _timing_shape(shape, t, get_backend(backend), None)
        cfg = TimingConfig(budget_ms=budget_ms, threads=threads)
        args = (str(t.path), backend, shp)
        kwargs = {"trials": trials, "config": cfg, "use_cache": not no_cache}
        if in_process:
            results = run_baselines(*args, **kwargs)
        else:
            from kstrata.execute import WorkerPool

            with WorkerPool(size=1, env={"KSTRATA_CACHE_DIR": str(cache_dir())}) as pool:
                if "metaschedule" in kinds_for(backend):
                    # tune in its own worker first: a crash in TVM costs only this baseline
                    tr = pool.call("kstrata.measure.baselines:tuned_tvm_info", str(t.path), shp,
                                   backend, trials, timeout_s=timeout_s)
                    if not tr.ok:
                        kwargs["unavailable"] = {"metaschedule": f"tuning {tr.kind}: {tr.error}"}
                r = pool.call("kstrata.measure.baselines:run_baselines", *args,
                              timeout_s=timeout_s, **kwargs)
            if not r.ok:
                console.print(f"[bold red]baseline failed ({r.kind}):[/] {r.error}")
                raise typer.Exit(1)
            results = r.value
        if as_json:
            typer.echo(json.dumps([x.to_dict() for x in results], indent=1))
            return
        console.print(_table(f"{t.name} at {', '.join(f'{k}={v}' for k, v in shp.items())}", backend, results))
        for line in untrusted_lines(results, budget_ms):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        for x in results:
            if not x.available:
                console.print(f"{x.kind} unavailable: {x.reason}", highlight=False)
        m = next((x.measurement for x in results if x.measurement), None)
        if m:
            console.print(f"device {m['device']}, {m['settings']['threads']} threads, "
                          f"method {m['method']}, versions "
                          + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
