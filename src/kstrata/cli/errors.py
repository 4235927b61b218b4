"""Turning a user's bad input into one clear message and exit code 2."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

from kstrata.backends.registry import UnknownBackendError
from kstrata.tasks.base import TaskError

err_console = Console(stderr=True)

#: Exceptions that mean "the user's input is wrong", not "kstrata has a bug".
USER_ERRORS: tuple[type[Exception], ...] = (TaskError, UnknownBackendError, FileNotFoundError)


@contextmanager
def user_errors() -> Iterator[None]:
    """Print a user error as ``error: ...`` on stderr and exit with status 2."""
    try:
        yield
    except USER_ERRORS as e:
        err_console.print(f"[bold red]error:[/] {e}", markup=True, highlight=False)
        raise typer.Exit(2) from None
