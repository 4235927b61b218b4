"""``kstrata setup``: create the isolated backend environments and check the main one.

TileLang and TVM cannot share one environment (DEVELOPERS.md), so the TileLang
backends get their own virtual environment; see :mod:`kstrata.backends.envs`.
"""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from kstrata.backends import envs

console = Console()


def register(app: typer.Typer) -> None:
    """Add the ``setup`` command to ``app``."""

    @app.command("setup")
    def setup(
        backends: list[str] = typer.Option(
            None, "--backends", "-b",
            help="Isolated environments to set up (default: all): "
            + ", ".join(envs.ENVS) + " or a backend name such as tilelang-c.",
        ),
        torch_spec: str = typer.Option(
            None, "--torch", help="pip requirement for torch in the isolated environments "
            "(default: the main environment's version, or $KSTRATA_TORCH_SPEC)."),
        pip_arg: list[str] = typer.Option(
            None, "--pip-arg", help="Extra argument for pip install, repeatable "
            "(e.g. --pip-arg=--index-url=URL)."),
        force: bool = typer.Option(False, "--force", help="Reinstall even if up to date."),
        skip_main_check: bool = typer.Option(False, "--skip-main-check",
                                             help="Do not import-check the main environment."),
    ) -> None:
        """Create the TileLang environment (under $KSTRATA_ENV_DIR or
        ~/.cache/kstrata/envs) and check that the main environment imports TVM."""
        specs = _select(backends or [])
        failed = False
        if not skip_main_check:
            table = Table(title="main environment")
            table.add_column("library")
            table.add_column("version / problem")
            for lib, v in envs.check_main_env().items():
                bad = v.startswith("error")
                failed |= bad and lib in ("torch", "tvm")
                table.add_row(lib, f"[red]{v}[/]" if bad else v)
            console.print(table)
        for spec in specs:
            with console.status(f"setting up [bold]{spec.name}[/] in {envs.env_dir(spec.name)} ..."):
                try:
                    res = envs.ensure_env(spec, torch_spec, tuple(pip_arg or ()), force,
                                          log=lambda s: console.log(s, markup=False, highlight=False))
                except envs.EnvMissingError as e:
                    console.print(f"[bold red]error:[/] {spec.name}: {e}", markup=True,
                                  highlight=False)
                    failed = True
                    continue
            keys = ("tilelang", "torch", "apache-tvm-ffi", "kstrata")
            versions = ", ".join(f"{k} {res.installed[k]}" for k in keys if k in res.installed)
            console.print(f"[green]✓[/] {spec.name}: {res.message} ({res.seconds:.1f} s) "
                          f"at {res.path} · {versions}")
        if failed:
            raise typer.Exit(1)


def _select(names: list[str]) -> list[envs.EnvSpec]:
    if not names:
        return list(envs.ENVS.values())
    out: list[envs.EnvSpec] = []
    for n in names:
        for part in n.split(","):
            spec = envs.ENVS.get(part) or envs.spec_for_backend(part)
            if spec is None:
                console.print(f"[bold red]error:[/] {part!r} needs no isolated environment or is "
                              f"unknown; choose from {', '.join(envs.ENVS)}", highlight=False)
                raise typer.Exit(2)
            if spec not in out:
                out.append(spec)
    return out
