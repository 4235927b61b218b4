"""The C/C++ or CUDA compiler's own errors for a TileLang kernel that does not compile.

TileLang 0.1.15 runs the host compiler with its stderr inherited (on Linux,
``tilelang.jit.adapter.libgen``), so its ``RuntimeError("Compilation
Failed! [command] ...")`` holds the command and the generated code but not
what the compiler said: a proposer saw 80 lines of C++ and not the line
"error: no match for 'operator>' (operand types are 'float4' ...)" (queue
round rt63, max_dim on tilelang-c). :func:`captured_stderr` records file
descriptor 2 (a child process's too) while a kernel compiles, and
:func:`with_compiler_errors` puts the compiler's error lines into the message.
Both run in the candidate's process.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator

#: a compiler diagnostic line: "/tmp/tmpab12.cpp:18:70: error: ..." (gcc, clang, nvcc)
_ERROR = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: ", re.MULTILINE)
#: at most this many lines of the compiler's output go into the message
MAX_LINES = 24


@contextlib.contextmanager
def captured_stderr() -> Iterator[list[str]]:
    """Record what is written to file descriptor 2 inside the block, the
    compilers TileLang starts included; yields a list that holds the text
    (str, decoded with replacement) once the block ends. The text is written
    to the real stderr afterwards too, so the process log keeps it."""
    out: list[str] = []
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield out
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            data = sink.read()
            out.append(data.decode("utf-8", "replace"))
            with contextlib.suppress(OSError):
                os.write(2, data)


def compiler_errors(stderr: str) -> str:
    """The compiler's error lines in ``stderr``, each with the lines after it
    up to the next diagnostic (gcc prints the source line and a caret there),
    the temporary file's path replaced by ``kernel.cpp``/``kernel.cu``; at most
    :data:`MAX_LINES` lines; ``""`` when there is none."""
    lines = stderr.splitlines()
    keep: list[str] = []
    for i, line in enumerate(lines):
        m = _ERROR.match(line)
        if not m:
            continue
        name = "kernel" + os.path.splitext(m.group("path"))[1]
        keep.append(line.replace(m.group("path"), name, 1))
        for nxt in lines[i + 1:i + 6]:
            if _ERROR.match(nxt) or re.match(r"^[^\s:]+:(\d+:)* (?:note|warning|In function)", nxt) \
                    or not nxt.startswith(" "):
                break
            keep.append(nxt)
        if len(keep) >= MAX_LINES:
            break
    return "\n".join(keep[:MAX_LINES])


def with_compiler_errors(message: str, stderr: str) -> str:
    """``message`` (a failed first call's) with the compiler's errors from
    ``stderr`` after its first line, where a message cut for a prompt keeps
    them; ``message`` unchanged when ``stderr`` holds no compiler error."""
    errors = compiler_errors(stderr)
    if not errors:
        return message
    head, _, rest = message.partition("\n")
    return f"{head}\nthe compiler's errors:\n{errors}" + (f"\nthe generated code:\n{rest.strip()}" if rest.strip() else "")
