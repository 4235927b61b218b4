"""Turning a user's bad input into one clear message and exit code 2."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

from kstrata.backends.registry import UnknownBackendError
from kstrata.tasks.base import TaskError

err_console = Console(stderr=True)


class OptionError(ValueError):
    """A command-line option value that cannot be used."""


def _user_errors() -> tuple[type[Exception], ...]:
    """Exceptions that mean "the user's input is wrong", not "kstrata has a bug"."""
    from kstrata.backends.envs import EnvMissingError
    from kstrata.config import ConfigError
    from kstrata.llm import ProviderError
    from kstrata.store.run_store import StoreError

    return (TaskError, UnknownBackendError, FileNotFoundError, OptionError, StoreError,
            ProviderError, ConfigError, EnvMissingError)


@contextmanager
def user_errors() -> Iterator[None]:
    """Print a user error as ``error: ...`` on stderr and exit with status 2."""
    try:
        yield
    except _user_errors() as e:
        err_console.print(f"[bold red]error:[/] {e}", markup=True, highlight=False)
        raise typer.Exit(2) from None
