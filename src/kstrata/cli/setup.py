"""``kstrata setup``: create the isolated backend environments and check the main one.

TileLang and TVM cannot share one environment (DEVELOPERS.md), so the TileLang
backends get their own virtual environment; see :mod:`kstrata.backends.envs`.
Without network: ``--download-wheels DIR`` (on a machine with network, for the
target's ``--python-version``/``--platform``) then ``--wheels DIR`` on the target.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from kstrata.cli.errors import Console, print_error
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
            "(default: the main environment's version, or $KSTRATA_TORCH_SPEC); 'system': install "
            "none and use the base interpreter's torch (e.g. a GPU machine's CUDA build)."),
        wheels: Path = typer.Option(
            None, "--wheels", help="Install from this folder of wheels only, without network "
            "(pip --no-index --find-links DIR); fill it with --download-wheels."),
        download: Path = typer.Option(
            None, "--download-wheels", help="Download into this folder the wheels that "
            "--wheels needs (for --python-version/--platform), then stop; needs network."),
        python_version: str = typer.Option(
            None, "--python-version", help="With --download-wheels: the target's Python, e.g. 3.12."),
        platform: list[str] = typer.Option(
            None, "--platform", help="With --download-wheels: a target pip platform tag, repeatable "
            "(e.g. manylinux_2_28_x86_64)."),
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
        if download is not None:
            if wheels is not None:
                _usage("--download-wheels and --wheels are two steps on two machines; give one")
            _download(specs, download, torch_spec, python_version, tuple(platform or ()),
                      tuple(pip_arg or ()))
            return
        if python_version or platform:
            _usage("--python-version and --platform choose what --download-wheels fetches")
        if wheels is not None:
            try:
                envs.check_wheel_dir(wheels)
            except envs.EnvMissingError as e:
                _usage(str(e))
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
                                          log=lambda s: console.log(s, markup=False, highlight=False),
                                          wheels=wheels)
                except envs.EnvMissingError as e:
                    print_error(f"{spec.name}: {e}", console)
                    failed = True
                    continue
            keys = ("tilelang", "torch", "apache-tvm-ffi", "kstrata")
            versions = ", ".join(f"{k} {res.installed[k]}" for k in keys if k in res.installed)
            console.print(f"[green]✓[/] {spec.name}: {res.message} ({res.seconds:.1f} s) "
                          f"at {res.path} · {versions}")
        if failed:
            raise typer.Exit(1)


def _usage(message: str) -> None:
    print_error(message, console)
    raise typer.Exit(2)


def _download(specs: list[envs.EnvSpec], dest: Path, torch_spec: str | None,
              python_version: str | None, platforms: tuple[str, ...], pip_args: tuple[str, ...]) -> None:
    """``--download-wheels``: fill ``dest`` for each spec and say what to run on the target."""
    for spec in specs:
        with console.status(f"downloading the wheels of [bold]{spec.name}[/] into {dest} ..."):
            try:
                got = envs.download_wheels(spec, dest, torch_spec, python_version, platforms, pip_args,
                                           log=lambda s: console.log(s, markup=False, highlight=False))
            except envs.EnvMissingError as e:
                print_error(f"{spec.name}: {e}", console)
                raise typer.Exit(1) from None
        mib = sum(w.stat().st_size for w in got) / 2**20
        console.print(f"[green]✓[/] {spec.name}: {len(got)} wheels, {mib:.0f} MiB in {dest.resolve()}",
                      highlight=False)
    torch = f" --torch {torch_spec}" if torch_spec else ""
    console.print(f"on the machine without network: kstrata setup --wheels DIR{torch} "
                  f"(DIR: a copy of {dest.resolve()})", highlight=False)


def _select(names: list[str]) -> list[envs.EnvSpec]:
    if not names:
        return list(envs.ENVS.values())
    out: list[envs.EnvSpec] = []
    for n in names:
        for part in n.split(","):
            spec = envs.ENVS.get(part) or envs.spec_for_backend(part)
            if spec is None:
                known = ", ".join(f"{name} (backends {', '.join(e.backends)})" for name, e in envs.ENVS.items())
                print_error(f"--backends {part!r}: not an isolated environment nor a backend that runs in one; "
                            f"choose an environment or one of its backends: {known} (other backends run in "
                            "kstrata's own environment and need no setup)", console)
                raise typer.Exit(2)
            if spec not in out:
                out.append(spec)
    return out
