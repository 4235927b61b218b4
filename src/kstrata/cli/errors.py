"""Turning a user's bad input into one clear message and exit code 2."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console


err_console = Console(stderr=True, soft_wrap=True)  # one line per error, never wrapped


class OptionError(ValueError):
    """A command-line option value that cannot be used."""


def check_number(option: str, value: float | None, *, minimum: float = 0.0, strict: bool = True,
                 unit: str = "") -> None:
    """Refuse a numeric option value that is NaN, infinite or too small.

    Parameters
    ----------
    option:
        The option's name as typed, e.g. ``"--timeout"``.
    value:
        Its value; ``None`` (an unset optional option) passes.
    minimum:
        The bound; ``strict`` makes it exclusive (``value > minimum``).
    unit:
        Shown after the bound in the message, e.g. ``" s"``.

    Raises
    ------
    OptionError
        ``"--timeout -1: must be a finite number > 0 s"``.
    """
    if value is None:
        return
    ok = math.isfinite(value) and (value > minimum if strict else value >= minimum)
    if not ok:
        raise OptionError(f"{option} {value:g}: must be a finite number {'>' if strict else '>='} "
                          f"{minimum:g}{unit}")


def _user_errors() -> tuple[type[Exception], ...]:
    """Exceptions that mean "the user's input is wrong", not "kstrata has a bug"
    (imported when one is raised: ``kstrata tree`` imports no backend or torch)."""
    from kstrata.backends.envs import EnvMissingError
    from kstrata.backends.registry import UnknownBackendError
    from kstrata.config import ConfigError
    from kstrata.llm import ProviderError
    from kstrata.search.budget import BudgetError
    from kstrata.sandbox.policy import SandboxUnavailable
    from kstrata.store.run_store import StoreError
    from kstrata.tasks.base import TaskError

    return (TaskError, UnknownBackendError, FileNotFoundError, OptionError, StoreError,
            ProviderError, ConfigError, EnvMissingError, BudgetError, SandboxUnavailable)


@contextmanager
def user_errors() -> Iterator[None]:
    """Print a user error as ``error: ...`` on stderr and exit with status 2."""
    try:
        yield
    except _user_errors() as e:
        err_console.print(f"[bold red]error:[/] {e}", markup=True, highlight=False)
        raise typer.Exit(2) from None
