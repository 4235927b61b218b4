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
static checks, which run in worker processes.
"""

from __future__ import annotations

import ast

#: text longer than this (characters) is refused before parsing: the largest shipped task or kernel
#: is under 20 KB, and KernelBench's largest problem files are under 10 KB
MAX_SOURCE_CHARS = 2_000_000


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
