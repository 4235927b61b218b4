"""Parsing Python text that may be hostile or broken, with one failure mode.

``ast.parse`` fails in more ways than ``SyntaxError``: text nested deeper than
the parser's stack (``x = ------...1``, ``1+1+...+1``) raises ``MemoryError``
or ``RecursionError``, and a NUL byte raises ``ValueError`` on Python 3.11.
A caller that catches ``SyntaxError`` alone then dies with a traceback on a
task file or a kernel file it should have reported in one line. Every parse of
user or candidate text in kstrata goes through :func:`parse_module`.

Parsing builds a syntax tree; it never runs the text. The trust boundary
(``DESIGN.md``) still keeps candidate text out of kstrata's own process: this
module is for task files (the judge and the CLI read them) and for the judge's
static checks, which run in worker processes; kstrata's own process checks a
candidate file (``kstrata import``, ``optimize --initial``) through
:func:`syntax_error_isolated`, which parses it in a child process.
"""

from __future__ import annotations

import ast
import os

from kstrata.textfile import TextTooLarge, read_text

#: text longer than this (characters) is refused before parsing: the largest shipped task or kernel
#: is under 20 KB, and KernelBench's largest problem files are under 10 KB
MAX_SOURCE_CHARS = 2_000_000


class SourceTooLarge(TextTooLarge):
    """A source file longer than :data:`MAX_SOURCE_CHARS`; the message names the file."""


def read_source(path: str | os.PathLike[str], errors: str = "strict") -> str:
    """The text of the file ``path`` as ``Path.read_text(errors=errors)``
    reads it, reading no more than :data:`MAX_SOURCE_CHARS` characters
    (:func:`kstrata.textfile.read_text`: a 3 GB candidate or task file was
    read whole, red team rt65); no source kstrata parses may be longer.

    Raises
    ------
    SourceTooLarge
        When the file holds more than :data:`MAX_SOURCE_CHARS` characters
        (naming the file and the limit, and what to give instead).
    OSError, UnicodeDecodeError
        As ``read_text`` does.
    """
    try:
        return read_text(path, MAX_SOURCE_CHARS, "a Python source file", errors=errors)
    except TextTooLarge as e:
        raise SourceTooLarge(f"{e} (the largest shipped task or kernel is under 20 KB); give the task's or "
                             "kernel's own .py file") from None


def parse_module(text: str, filename: str = "<text>", mode: str = "exec") -> ast.AST:
    """``ast.parse(text, filename, mode)`` (an ``ast.Module``, or an ``ast.Expression`` for
    ``mode="eval"``), raising ``SyntaxError`` for every way the text cannot be parsed.

    Raises
    ------
    SyntaxError
        When the text does not parse, is nested too deeply for the parser
        (``MemoryError``/``RecursionError`` inside ``ast.parse``), holds a NUL
        byte, or is longer than :data:`MAX_SOURCE_CHARS`; ``msg`` says which,
        ``filename`` is set, ``lineno`` is ``None`` where no line applies.
    """
    if len(text) > MAX_SOURCE_CHARS:
        raise SyntaxError(f"the text is {len(text)} characters, over the {MAX_SOURCE_CHARS} a Python "
                          "source file may have here", (filename, None, None, None))
    try:
        return ast.parse(text, filename=filename, mode=mode)
    except SyntaxError:
        raise
    except (MemoryError, RecursionError) as e:
        raise SyntaxError(f"nested too deeply to parse ({type(e).__name__})",
                          (filename, None, None, None)) from None
    except ValueError as e:  # NUL bytes on Python 3.11
        raise SyntaxError(str(e), (filename, None, None, None)) from None


#: What :func:`syntax_error_isolated`'s child process runs: parse stdin (never run it) and print
#: ``null`` or ``{"msg", "line", "text"}`` of the first syntax error as JSON.
_CHILD = """\
import json, sys
from kstrata.pysyntax import parse_module
try:
    parse_module(sys.stdin.read(), sys.argv[1])
    print("null")
except SyntaxError as e:
    print(json.dumps({"msg": e.msg, "line": e.lineno, "text": (e.text or "").rstrip()}))
"""

#: Address-space limit (bytes) and wall-clock limit (s) of that child: parsing a 2 MB file takes
#: well under a second and a few hundred MB; a parser driven past these fails, never kstrata.
ISOLATED_MEMORY = 2 << 30
ISOLATED_TIMEOUT_S = 30.0


def syntax_error_isolated(text: str, filename: str = "<text>") -> dict | None:
    """The first syntax error of candidate ``text``, found by :func:`parse_module`
    in a child process (kstrata's own process never parses candidate text:
    DESIGN.md, trust boundary). Parsing does not run the text; the child keeps
    a parser crash or blow-up (deep nesting) away from kstrata's process, under
    :data:`ISOLATED_MEMORY` and :data:`ISOLATED_TIMEOUT_S`.

    Returns
    -------
    dict or None
        ``{"msg": str, "line": int | None, "text": str}`` (``text``: the
        offending line, stripped at the right) or None when the text parses.
        A child that fails or is killed gives ``{"msg": "could not be parsed
        (...)", "line": None, "text": ""}``.
    """
    import json
    import resource
    import subprocess
    import sys

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ISOLATED_MEMORY, ISOLATED_MEMORY))

    try:  # -P: `-c` put the working folder first on sys.path, and a json.py there ran (red-team rt57)
        r = subprocess.run([sys.executable, "-P", "-c", _CHILD, filename], check=False, input=text, capture_output=True,
                           text=True, timeout=ISOLATED_TIMEOUT_S, preexec_fn=limits)
    except subprocess.TimeoutExpired:
        return {"msg": f"could not be parsed (the parser did not finish in {ISOLATED_TIMEOUT_S:g} s)",
                "line": None, "text": ""}
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        last = (r.stderr.strip().splitlines() or [f"status {r.returncode}"])[-1][:200]
        return {"msg": f"could not be parsed (the parser's process failed: {last})", "line": None, "text": ""}


def syntax_error_text(where: str, bad: dict) -> str:
    """``WHERE, line N: Python syntax error, MSG: `the line``` for a
    :func:`syntax_error_isolated` result ``bad`` (the line cut at 120
    characters), as ``import``, ``optimize --initial`` and ``eval`` name a
    candidate that does not parse."""
    at = f", line {bad['line']}" if bad.get("line") else ""
    line = str(bad.get("text") or "").strip()
    shown = f": `{line[:120]}{'...' if len(line) > 120 else ''}`" if line else ""
    return f"{where}{at}: Python syntax error, {bad['msg']}{shown}"


def not_python_file(path: str | os.PathLike[str], what: str) -> str | None:
    """Why ``path`` is not taken as a Python file (its name ends in another
    suffix than ``.py``, e.g. ``notes.txt``), or None for a ``.py`` file or a
    name without a suffix. Said before any syntax check, so that a text file
    is not reported as a Python syntax error (newcomer nc22); ``what`` names
    what was expected, e.g. ``"a task file (a .py file defining Model)"``."""
    suffix = os.path.splitext(os.fspath(path))[1]
    if suffix in ("", ".py"):
        return None
    return f"{os.fspath(path)}: not a Python file (its name ends in {suffix}); give {what}"
