"""Turning a user's bad input into one clear message and exit code 2."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import rich.console
import typer
from rich.errors import MarkupError
from rich.segment import Segment
from rich.style import Style

from kstrata.sandbox.wire import printable


class Console(rich.console.Console):
    """rich's console, every command's: the text it prints has its control
    characters written out (:func:`kstrata.sandbox.wire.printable`), so text
    that reached a command from a candidate (its source, an error it raised,
    its output, an LLM's rationale) cannot move the cursor over a verdict and
    print another, set the terminal's title or clipboard, or reorder what is
    shown. rich's own cursor and screen commands (control segments) and its
    colours and weights pass as they are.

    Text a command shows in a table cell or a line is read as rich markup
    wherever it is a plain string (an LLM's rationale in ``kstrata show``, a
    proposer error in ``optimize``'s warning): there ``[link=URL]...[/link]``
    became a terminal hyperlink escape (OSC 8) to any address behind harmless
    words, ``[conceal]`` hid text, and a stray closing tag (``[/graph]``)
    ended the command in a ``MarkupError`` (red team rt51). So styles lose
    their link and conceal attributes here, and a string whose markup does not
    parse is shown as written."""

    #: Columns when the output is not a terminal and COLUMNS is unset: rich's 80 cut a piped table's last
    #: column and note mid-word (newcomer nc16: ``kstrata compare A B > f`` lost "intervals overlap"); a
    #: table takes its natural width up to this, and a long line wraps only past it.
    PIPE_WIDTH = 240

    @property
    def size(self):  # type: ignore[no-untyped-def] - rich's signature
        """rich's size, but :data:`PIPE_WIDTH` columns off a terminal unless a width or COLUMNS was given."""
        dims = super().size
        if self._width is None and not self.is_terminal and not (self._environ.get("COLUMNS") or "").isdigit():
            return dims._replace(width=self.PIPE_WIDTH)
        return dims

    @size.setter
    def size(self, new_size):  # type: ignore[no-untyped-def] - rich's signature
        rich.console.Console.size.fset(self, new_size)

    def render_str(self, text, **kwargs):  # type: ignore[no-untyped-def] - rich's signature
        try:
            return super().render_str(text, **kwargs)
        except MarkupError:
            return super().render_str(text, **{**kwargs, "markup": False})

    def _render_buffer(self, buffer):  # type: ignore[no-untyped-def] - rich's (private) last step
        out = super()._render_buffer(Segment(printable(text), _shown(style), control) if control is None and text
                                     else Segment(text, style, control) for text, style, control in buffer)
        if self.is_terminal:
            return out
        # off a terminal (a log, a pipe, a file) a table or source block padded every line with spaces to the
        # console's 240 columns (newcomer nc18): the lines end where their text does
        return "\n".join(line.rstrip(" ") for line in out.split("\n"))


def _shown(style: Style | None) -> Style | None:
    """``style`` without a hyperlink or concealment (see :class:`Console`)."""
    if style is None or not (style.link or style.conceal):
        return style
    return Style(color=style.color, bgcolor=style.bgcolor, bold=style.bold, dim=style.dim, italic=style.italic,
                 underline=style.underline, blink=style.blink, reverse=style.reverse, strike=style.strike)


err_console = Console(stderr=True, soft_wrap=True)  # one line per error, never wrapped


class OptionError(ValueError):
    """A command-line option value that cannot be used."""


#: Largest wall-clock limit an option may set (s, about 115 days): the OS's
#: waits take no more (``--timeout 1e308`` ended ``kstrata eval`` in an
#: OverflowError traceback, "timestamp out of range for platform time_t").
MAX_SECONDS = 1e7


#: Bounds of a ``--seed``: what a SQLite INTEGER holds (signed 64 bits), where
#: a run records it; ``--seed 99999999999999999999999`` ended ``kstrata
#: optimize`` in an OverflowError traceback after it had made the run folder
#: (red team rt71).
SEED_MIN, SEED_MAX = -(1 << 63), (1 << 63) - 1


def check_seed(option: str, value: int) -> None:
    """Refuse a seed a run cannot record (:data:`SEED_MIN` .. :data:`SEED_MAX`).

    Raises
    ------
    OptionError
        ``"--seed 99999999999999999999999: must be a whole number from -2**63 to 2**63 - 1"``.
    """
    if not SEED_MIN <= value <= SEED_MAX:
        raise OptionError(f"{option} {value}: must be a whole number from -2**63 to 2**63 - 1")


def check_number(option: str, value: float | None, *, minimum: float = 0.0, strict: bool = True,
                 unit: str = "", maximum: float = math.inf) -> None:
    """Refuse a numeric option value that is NaN, infinite, too small or
    above ``maximum`` (e.g. :data:`MAX_SECONDS` for a time limit).

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
    if value > maximum:
        raise OptionError(f"{option} {value:g}: must be at most {maximum:g}{unit}")


#: Exceptions that mean "the user's input is wrong", not "kstrata has a bug":
#: (module, class name). A class whose module was never imported cannot have
#: been raised, so the check imports nothing (a typo'd option must not pay for
#: importing torch or TVM: seconds on a busy machine).
USER_ERRORS: tuple[tuple[str, str], ...] = (
    ("kstrata.tasks.errors", "TaskError"),  # kstrata.tasks.base re-exports it (and loads torch)
    ("kstrata.backends.registry", "UnknownBackendError"),
    ("kstrata.store.run_store", "StoreError"),
    ("kstrata.llm", "ProviderError"),
    ("kstrata.config", "ConfigError"),
    ("kstrata.backends.envs", "EnvMissingError"),
    ("kstrata.search.budget", "BudgetError"),
    ("kstrata.sandbox.policy", "SandboxUnavailable"),
    ("kstrata.tasks.scaled", "ShapeModeError"),
    ("kstrata.agents.memory", "MemoryFileError"),
    ("kstrata.textfile", "UnreadableFile"),
)


#: ``errno`` names of an ``OSError`` on a path that mean the path given cannot be used as it is: a file
#: where a folder must be (EEXIST from ``mkdir(exist_ok=True)``, ENOTDIR), a folder where a file must
#: be, one this user may not write, a read-only file system, a name too long, a loop of links
PATH_ERRNOS = ("EEXIST", "ENOTDIR", "EISDIR", "EACCES", "EPERM", "EROFS", "ENAMETOOLONG", "ELOOP")


def path_error(e: BaseException) -> str | None:
    """One line for an ``OSError`` on a path the command was given or derived
    from one (:data:`PATH_ERRNOS`, with its file name), else None: ``kstrata
    import -o FILE`` and ``kstrata report RUN -o FILE/x.html`` ended in a
    ``FileExistsError``/``NotADirectoryError`` traceback (red-team rt59)."""
    import errno

    codes = {getattr(errno, n) for n in PATH_ERRNOS if hasattr(errno, n)}
    if not isinstance(e, OSError) or e.errno not in codes or not e.filename:
        return None
    return (f"{e.filename}: {e.strerror or e}; this path cannot be used (a file where a folder must be, a "
            "folder where a file must be, or one this user cannot write): give another path")


def is_user_error(e: BaseException) -> bool:
    """Whether ``e`` is the user's mistake (:data:`USER_ERRORS`, :class:`OptionError`,
    a missing file or an unusable path, :func:`path_error`), to be printed as one ``error:`` line."""
    import sys

    if isinstance(e, (OptionError, FileNotFoundError)) or path_error(e):
        return True
    for module, name in USER_ERRORS:
        cls = getattr(sys.modules.get(module), name, None)
        if cls is not None and isinstance(e, cls):
            return True
    return False


def print_error(message: object, console: rich.console.Console | None = None) -> None:
    """Print ``error: <message>`` on stderr (or ``console``), the word in bold
    red and ``message`` as plain text: rich markup in it is escaped, so an
    advice such as "e.g. [x]" or a path with brackets is printed as written."""
    from rich.markup import escape

    (console or err_console).print(f"[bold red]error:[/] {escape(str(message))}", markup=True, highlight=False)


def disk_full(e: BaseException) -> str | None:
    """What could not be written, when ``e`` says the disk (or the user's
    quota) is full: an ``OSError`` ``ENOSPC``/``EDQUOT`` (its file name, where
    it has one) or SQLite's ``database or disk is full`` (``"the run store"``);
    ``None`` for any other error."""
    import errno
    import sqlite3

    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
        return str(e.filename) if e.filename else "a file"
    if isinstance(e, sqlite3.OperationalError) and "disk is full" in str(e):
        return "the run store (run.db)"
    return None


def exit_if_disk_full(e: BaseException, again: str) -> None:
    """When ``e`` says the disk is full (:func:`disk_full`), print ``error:
    disk full writing WHAT; free space, then AGAIN`` (``again``: what to run
    once space is freed) and exit with status 1; else return."""
    full = disk_full(e)
    if full is not None:
        print_error(f"disk full writing {full}; free space, then {again}")
        raise typer.Exit(1) from None


@contextmanager
def user_errors(again: str = "run the command again") -> Iterator[None]:
    """Print a user error as ``error: ...`` on stderr and exit with status 2;
    a full disk (:func:`disk_full`) as one line saying what could not be
    written and ``again`` (what to run once space is freed), exit status 1."""
    try:
        yield
    except Exception as e:
        exit_if_disk_full(e, again)
        if not is_user_error(e):
            raise
        print_error(path_error(e) or e)
        raise typer.Exit(2) from None
