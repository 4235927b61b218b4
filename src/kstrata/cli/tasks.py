"""``kstrata tasks``: list, show and check tasks."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.table import Table

from kstrata.cli.errors import Console, user_errors
from kstrata.tasks.names import check_task_argument

# kstrata.tasks.loader and kstrata.tasks.dims load torch: each command imports them after the arguments that
# can be checked without it (newcomer nc23: `tasks show` of an unknown name took 10-11 s to say so)

app = typer.Typer(help="List and inspect tasks (the shipped suite or a directory).", no_args_is_help=True)
# 80 columns is rich's width when piped; tables of task names need more
console = Console(width=None if sys.stdout.isatty() else 160)


def _fmt_count(x: float | None, unit: str) -> str:
    if x is None:
        return "-"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{prefix}{unit}"
    return f"{x:.0f}{unit}"


@app.command("list")
def list_(
    level: int | None = typer.Option(None, "--level", help="Only tasks of this level (1, 2, 3)."),
    category: str | None = typer.Option(None, "--category", help="Only tasks of this category."),
    path: Path | None = typer.Option(None, "--path", help="A directory of task files (KernelBench format) instead of the suite."),
) -> None:
    """List tasks with level, category, dtype and nominal arithmetic intensity."""
    from kstrata.tasks.loader import load_dir_lenient, suite

    problems: list = []
    with user_errors():
        tasks, problems = load_dir_lenient(path) if path else (suite(), [])
    if path:  # a task whose reference cannot run is no task (newcomer nc16: listed here, refused by tasks show)
        from kstrata.tasks.base import TaskError
        from kstrata.tasks.loader import check_reference

        runnable = []
        for t in tasks:
            try:
                check_reference(t)
                runnable.append(t)
            except TaskError as e:
                problems.append(e)
        tasks = runnable
    # a candidate file (ModelNew, no Model) beside the tasks is no problem: counted in one line (newcomer nc14:
    # every candidate printed a long 'skipped: missing Model, ...' line); so are kstrata's runs and exports
    # (newcomer nc15: an export's task.py was listed as a task named "task")
    from kstrata.tasks.loader import SkippedOnPurpose

    candidates = [e.path for e in problems if isinstance(e, SkippedOnPurpose) and e.kind == "candidate"]
    folders = [e for e in problems if isinstance(e, SkippedOnPurpose) and e.kind == "folder"]
    for e in problems:  # a file that is no task by its text is listed with why, never run (newcomer nc21)
        if not isinstance(e, SkippedOnPurpose) or e.kind == "not_task":
            console.print(f"[yellow]skipped:[/] {e}", highlight=False)
    if candidates:
        console.print(f"skipped {len(candidates)} candidate file(s) (they define ModelNew, not a task's Model): "
                      + ", ".join(c.name for c in candidates[:8])
                      + (" ..." if len(candidates) > 8 else ""), highlight=False, markup=False)
    if folders:
        console.print(f"skipped {len(folders)} folder(s) of kstrata's own output (runs, exports, imports; their "
                      "files are copies, not tasks): " + ", ".join(str(e.path.relative_to(path)) for e in folders[:8])
                      + (" ..." if len(folders) > 8 else ""), highlight=False, markup=False)
    everything = tasks
    tasks = sorted((t for t in tasks if (level is None or t.level == level) and (category is None or t.category == category)),
                   key=lambda t: (t.level, t.name))
    if not tasks and everything:
        levels = sorted({t.level for t in everything})
        categories = sorted({t.category for t in everything})
        console.print(f"no task matches; levels here: {levels}; categories: {', '.join(categories)}",
                      highlight=False)
        return
    table = Table(title=f"{len(tasks)} tasks" + (f" in {path}" if path else " in the kstrata suite"))
    table.add_column("name", no_wrap=True)
    for col in ("level", "category", "dtype", "FLOPs", "bytes", "FLOP/B"):
        table.add_column(col, no_wrap=True)
    for t in tasks:
        ai = t.arithmetic_intensity()
        table.add_row(
            t.name, str(t.level), t.category, t.meta.dtype,
            _fmt_count(t.flops(), "FLOP"), _fmt_count(t.bytes(), "B"),
            f"{ai:.2f}" if ai is not None else "-",
        )
    console.print(table)


@app.command("show")
def show(
    name: str = typer.Argument(..., metavar="NAME", help="Suite task name or path to a task file."),
    path: Path | None = typer.Option(None, "--path", help="Directory to look the name up in."),
) -> None:
    """Shapes, dtype, FLOPs, bytes, arithmetic intensity and tolerance of one task."""
    with user_errors():
        check_task_argument(name, path)
        from kstrata.tasks.dims import input_shapes, is_dim_key, variation_note
        from kstrata.tasks.loader import resolve_task

        t = resolve_task(name, path)
    m = t.meta
    console.print(f"[bold]{t.name}[/]  level {m.level} · {m.category} · {m.dtype}   ({t.path})")
    if m.description:
        console.print(m.description)
    shapes = Table(title="shapes")
    # the shapes the tests really use: small (public) and sweep (hidden, before secret perturbations)
    rows = [("nominal", t.nominal_shape)] + [("small", s) for s in t.small_shapes] + [("sweep", s) for s in t.sweep_shapes]
    literal = any(is_dim_key(k) for s in rows for k in s[1]) or not t.nominal_shape
    for col in ("set", "shape", "FLOPs", "bytes", "FLOP/B") + (("inputs",) if literal else ()):
        shapes.add_column(col, no_wrap=col == "set")  # input sizes only where the shape does not name them
    with user_errors():
        for label, s in rows:
            full = t.full_shape(s)
            ai = t.arithmetic_intensity(full)
            shapes.add_row(label, ", ".join(f"{k}={v}" for k, v in full.items()) or "(literal)",
                           _fmt_count(t.flops(full), "FLOP"), _fmt_count(t.bytes(full), "B"),
                           f"{ai:.2f}" if ai is not None else "-",
                           *([", ".join("x".join(map(str, x)) for x in input_shapes(t, full))] if literal else []))
        note = variation_note(t)
    console.print(shapes)
    if literal and any(is_dim_key(k) for k in t.sweep_shapes[0]):
        console.print("shapes inferred from get_inputs() (literal sizes): '@N' is the dimension of "
                      "nominal extent N, tied across inputs", highlight=False)
    if note:
        console.print(f"[yellow]{note}[/]", highlight=False)
    tol = m.tolerance
    if tol.kind == "quant":
        desc = f"quant: cosine >= {tol.cosine}, rel-L1 <= {tol.rel_l1}, RMSE <= {tol.rmse}"
    elif tol.kind == "exact":
        desc = "exact equality"
    else:
        desc = (f"oracle (fp64): err <= max(floor={tol.floor}, {tol.k} x native error) + dtype bound"
                if tol.floor is not None else f"oracle (fp64): err <= {tol.k} x native error + dtype bound")
        if tol.atol is not None or tol.rtol is not None:
            desc += f" (atol={tol.atol}, rtol={tol.rtol})"
    console.print(f"tolerance: {desc}")
    console.print(f"distributions: {', '.join(m.distributions)}")
    console.print(f"precision: tf32 {'allowed' if m.precision.allow_tf32 else 'forbidden'}, "
                  f"reduced precision {'allowed' if m.precision.allow_reduced_precision else 'forbidden'}")
    if m.flops:
        console.print(f"FLOPs formula: {m.flops}")
    else:  # measured by PyTorch's FlopCounterMode, which counts matmuls and convolutions only (newcomer nc11)
        console.print("FLOPs: measured from one reference call, counting matrix products and convolutions only "
                      "(element-wise work and reductions count 0); give a 'flops' formula in the task's KSTRATA "
                      "metadata for a truer roofline")
    if m.bytes:
        console.print(f"bytes formula: {m.bytes}")


@app.command("check")
def check(
    name: str | None = typer.Argument(None, metavar="NAME", help="Task name or file; default: every task."),
    path: Path | None = typer.Option(None, "--path", help="A directory of task files instead of the suite."),
    scope: str = typer.Option("small", "--scope", help="Shapes to check: small or full (the sweep)."),
) -> None:
    """Weak-test guard: report tasks whose checks an all-zero, constant or
    input-independent output would pass. Exits 1 if any task is weak."""
    with user_errors():
        if name:
            check_task_argument(name, path)
        from kstrata.verify.weak import fakes_under_dtype_atol, weak_fakes
        from kstrata.tasks.dims import variation_kind
        from kstrata.tasks.loader import load_dir, resolve_task, suite

        tasks = [resolve_task(name, path)] if name else (load_dir(path) if path else suite())
    table = Table(title=f"weak-test guard ({scope} shapes)")
    for col in ("task", "passing fake outputs", "status", "shape variation"):
        table.add_column(col)
    weak = 0
    for t in tasks:
        fakes = weak_fakes(t, scope=scope)
        if not fakes:
            # rejected here only because kstrata scales atol to the outputs: its outputs are all tiny
            fakes = [f"{f} (under a fixed atol; every output is near or below it: add a draw with larger "
                     "outputs)" for f in fakes_under_dtype_atol(t, scope=scope)]
        weak += bool(fakes)
        kind = variation_kind(t)
        table.add_row(t.name, ", ".join(fakes) or "-", "[red]WEAK[/]" if fakes else "[green]ok[/]",
                      {"ok": "ok", "hidden only": "[yellow]hidden only[/]", "none": "[yellow]NONE[/]"}[kind])
    console.print(table)
    fixed = [t.name for t in tasks if variation_kind(t) == "none"]
    if fixed:
        console.print(f"[yellow]{len(fixed)} task(s) allow no shape variation (every test runs the nominal "
                      f"input shapes): {', '.join(fixed)}[/]", highlight=False)
    hidden = [t.name for t in tasks if variation_kind(t) == "hidden only"]
    if hidden:
        console.print(f"[yellow]{len(hidden)} task(s) vary shapes in hidden tests only (public tests run the "
                      f"nominal shape; add shapes.small/shapes.sweep metadata): {', '.join(hidden)}[/]",
                      highlight=False)
    if weak:
        console.print(f"[red]{weak} task(s) have tests too weak to reject fake outputs[/]")
        raise typer.Exit(1)
