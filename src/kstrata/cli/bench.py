"""``kstrata bench``: run tasks × backends × proposers at equal budgets, resumably."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from kstrata.bench.harness import (
    BenchError,
    BenchSpec,
    builtin_proposers,
    parse_budget,
    run_bench,
)
from kstrata.cli.errors import Console, check_number, check_seed, print_error, user_errors
from kstrata.cli.optimize import TIMING_SHAPE_HELP, _absolute_llm
from kstrata.execute.select import EXECUTOR_HELP
from kstrata.shellarg import arg
from kstrata.store.run_store import StoreError

console = Console()


@contextmanager
def bench_errors() -> Iterator[None]:
    """:func:`~kstrata.cli.errors.user_errors`, plus bad bench specs, budgets and
    directories (``error: ...`` on stderr, exit status 2)."""
    with user_errors():
        try:
            yield
        except (BenchError, StoreError, ValueError) as e:
            print_error(e)
            raise typer.Exit(2) from None


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (text or "").split(",") if p.strip())


def _print_devices(backends: tuple[str, ...]) -> None:
    """One ``device: ...`` line per backend of the bench (unknown names are
    left to the bench's own error)."""
    from kstrata.backends.pytorch_cuda import device_line
    from kstrata.backends.registry import UnknownBackendError, get_backend

    for name in backends:
        try:
            console.print(device_line(get_backend(name)), markup=False, highlight=False)
        except (UnknownBackendError, ImportError):
            continue


def register(app: typer.Typer) -> None:
    """Add the ``bench`` command to ``app``."""

    @app.command("bench")
    def bench(
        suite: str = typer.Option("all", "--suite", help="all, a suite folder (level1, level2, "
                                  "level3, quant), or a directory of task files."),
        backends: str = typer.Option("tvm-llvm", "--backends", "-b", help="Comma-separated backends (the builtin proposer has rules for tvm-*, triton* and tilelang-*; pytorch needs an LLM proposer)."),
        proposers: str = typer.Option("builtin", "--proposers", "-p",
                                      help="Comma-separated proposer names."),
        budget: str = typer.Option("evals=20", "--budget", help="Per task and proposer: "
                                   "evals=N,wall=S,calls=N,tokens_in=N,tokens_out=N,cost=USD."),
        tasks: str | None = typer.Option(None, "--tasks", help="Comma-separated task names to keep."),
        sample: int | None = typer.Option(None, "--sample", help="N tasks per backend, balanced "
                                          "over levels and categories (deterministic by --seed)."),
        seed: int = typer.Option(0, "--seed", help="Seeds the sample and the searches."),
        policy: str = typer.Option("greedy", "--policy", help="Search policy."),
        baselines: str = typer.Option("eager", "--baselines", help="Comma-separated baselines "
                                      "(eager, compile, metaschedule); the first is primary."),
        preset: str = typer.Option("strict", "--preset", help="Integrity preset: strict or warn."),
        timing_shape: str = typer.Option("auto", "--timing-shape", help=TIMING_SHAPE_HELP),
        out: Path = typer.Option(Path("bench"), "--out", "-o", help="Bench directory."),
        resume: bool = typer.Option(False, "--resume", help="Continue the bench in --out."),
        llm: str | None = typer.Option(None, "--llm", help="PROVIDER:MODEL for LLM proposers."),
        config: Path | None = typer.Option(None, "--config", help="kstrata.toml for LLM settings."),
        executor: str = typer.Option("local", "--executor", help=EXECUTOR_HELP + "; on Ray, "
                                     "cells run at once."),
    ) -> None:
        """Run a benchmark into OUT (one optimize run per task, backend and proposer)."""
        from rich.text import Text

        from kstrata.cli.optimize import progress_best
        from kstrata.cli.progress import Heartbeat

        status = Text("")

        def progress(event: str, cell: dict) -> None:
            where = f"{cell['task']} · {cell['backend']} · {cell['proposer']}"
            if event == "stopped":  # the cell's own line follows (its 'evaluated' line was printed: nc19)
                return
            if event == "evaluated":  # inside a cell: a line per evaluation (newcomer nc17 F13)
                spent = cell.get("spent") or {}
                status.plain = f"{where}: evaluated {int(spent.get('evaluations', 0))} · " \
                               f"{progress_best(cell.get('tree'))}"
                console.print(f"  {status.plain}", highlight=False, markup=False, soft_wrap=True)
                return
            if event not in ("cell_start", "cell_done", "cell_skip", "cell_failed"):
                return  # the search's other events (expanded, ...) only restart the heartbeat's clock
            status.plain = where
            if event == "cell_start":
                console.print(f"[bold]▶[/] {where}", highlight=False)
            elif event == "cell_done":  # the best as the run's summary gives it (an unranked one is no speedup)
                from kstrata.search.views import best_phrase

                from kstrata.store.run_store import StoreError, read_summary

                try:
                    summary = read_summary(out / cell["run_dir"]) or {}
                except StoreError:
                    summary = {}
                console.print(f"  [green]done[/] {cell['stop_reason']}; best {best_phrase(summary)}", highlight=False)
            elif event == "cell_skip":
                console.print(f"[dim]skip {where} (done)[/]", highlight=False)
            else:
                console.print(f"  [red]failed[/] {cell['error'].splitlines()[0]}", highlight=False)

        with bench_errors():
            check_number("--sample", sample, minimum=1, strict=False)
            from kstrata.cli.optimize import check_shape_text

            check_shape_text(timing_shape)  # before the suite loads (newcomer nc22)
            check_seed("--seed", seed)
            from kstrata.verify.integrity.registry import preset as check_preset

            check_preset(preset)  # an unknown one made every candidate a runtime_error of the evaluator
            if config is not None:  # read by the LLM proposers only: a bad file was ignored by the others
                from kstrata.config import load_config

                load_config(config)
            spec = BenchSpec(
                suite=suite, backends=_split(backends), proposers=_split(proposers),
                budget=parse_budget(budget).to_dict(), tasks=_split(tasks), sample=sample,
                seed=seed, policy=policy, baselines=_split(baselines) or ("eager",), preset=preset,
                timing_shape=timing_shape,
            )
            from kstrata.measure.baselines import check_baselines

            for name in spec.backends:  # each known and applicable (newcomer nc16: unknown ones were dropped)
                check_baselines(spec.baselines, name)
            proposer_factories = builtin_proposers(llm=llm, config=config)
            _print_devices(spec.backends)
            from kstrata.cli.signals import exit_status, interrupted_word, sigterm_as_interrupt

            try:
                # a step (a verification, a MetaSchedule tuning) can run for minutes: a line every 30 s
                beat = Heartbeat(status, lambda line: console.print(f"  {line}", highlight=False, markup=False,
                                                                    soft_wrap=True),
                                 line_events=("cell_start", "cell_done", "cell_skip", "cell_failed",
                                              "evaluated"))
                with sigterm_as_interrupt(), beat:
                    result = run_bench(spec, out, resume=resume, proposers=proposer_factories,
                                       progress=beat.wrap(progress), executor=executor)
            except KeyboardInterrupt as exc:  # newcomer nc17: an interrupted bench said nothing
                given = [("--suite", suite, "all"), ("--backends", backends, "tvm-llvm"),
                         ("--proposers", proposers, "builtin"), ("--budget", budget, "evals=20"),
                         ("--tasks", tasks, None), ("--sample", sample, None), ("--seed", seed, 0),
                         ("--policy", policy, "greedy"), ("--baselines", baselines, "eager"),
                         ("--preset", preset, "strict"), ("--timing-shape", timing_shape, "auto"),
                         # paths absolute: the command is pasteable from any folder (newcomer nc21)
                         ("--llm", llm and _absolute_llm(llm), None),
                         ("--config", config and config.resolve(), None),
                         ("--executor", executor, "local"), ("--out", out.resolve(), None)]
                again = " ".join(arg(w) for w in ["kstrata", "bench", *[x for name, value, default in given
                                                                         if value != default
                                                                         for x in (name, value)], "--resume"])
                console.print(f"\n{interrupted_word(exc)}; the bench is kept (finished runs stay done, the "
                              f"interrupted one continues where it stopped). Continue it with:\n  {again}",
                              markup=False, highlight=False, soft_wrap=True)
                raise typer.Exit(exit_status(exc)) from None
        failed = [c for c in result.cells if c["status"] == "failed"]
        from kstrata.search.views import bench_table

        console.print(bench_table(out))
        unsupported = [c for c in result.cells if c["status"] == "unsupported"]
        not_run = (f", {len(unsupported)} not run (unsupported: the backend ships no starting kernel for the "
                   f"task; `kstrata optimize TASK --backend B --initial FILE` starts from yours)"
                   if unsupported else "")
        console.print(f"{len(result.ran)} run, {len(result.skipped)} skipped, {len(failed)} failed{not_run}; "
                      f"report: kstrata report {arg(out)}", highlight=False, soft_wrap=True)
