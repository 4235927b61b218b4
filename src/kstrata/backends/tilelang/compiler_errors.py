"""The C/C++ or CUDA compiler's own errors for a TileLang kernel that does not compile.

TileLang 0.1.15 runs the host compiler with its stderr inherited (on Linux,
``tilelang.jit.adapter.libgen``), so its ``RuntimeError("Compilation
Failed! [command] ...")`` holds the command and the generated code but not
what the compiler said: a proposer saw 80 lines of C++ and not the line
"error: no match for 'operator>' (operand types are 'float4' ...)" (queue
round rt63, max_dim on tilelang-c). :func:`compiler_output` runs that
command again and :func:`with_compiler_errors` puts the compiler's error
lines into the message. Both run in the candidate's process.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import tempfile

#: a compiler diagnostic line: "/tmp/tmpab12.cpp:18:70: error: ..." (gcc, clang, nvcc)
_ERROR = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: ", re.MULTILINE)
#: at most this many lines of the compiler's output go into the message
MAX_LINES = 24
#: the compilers TileLang 0.1.15 runs (tilelang.contrib.cc.get_cplus_compiler, nvcc): another program is never run
COMPILERS = frozenset({"g++", "c++", "gcc", "cc", "clang++", "clang", "nvcc"})
#: TileLang's failure: "Compilation Failed! ['/usr/bin/g++', '-std=c++17', ...]" (tilelang.jit.adapter.libgen)
_FAILED = re.compile(r"Compilation Failed! (\[[^\n]*\])")


def compiler_output(message: str, timeout_s: float = 120.0) -> str:
    """What the compiler says when the command of TileLang's ``Compilation
    Failed! [command]`` ``message`` is run again (its source file is still
    there: TileLang writes it with ``delete=False``), stdout and stderr
    together; ``""`` when ``message`` is not such a failure, the command is
    not a list of strings, its source file is gone, or it does not end in
    ``timeout_s`` seconds. Run again rather than captured the first time:
    redirecting file descriptor 2 around the first call would also take a
    crash's stack (faulthandler writes to it) away from the process log."""
    m = _FAILED.search(message)
    if not m:
        return ""
    try:
        command = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return ""
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        return ""
    # only a compiler on a temporary source, as TileLang runs it: a message the candidate raised itself
    # does not get another program run here
    if os.path.basename(command[0]) not in COMPILERS:
        return ""
    tmp = os.path.realpath(tempfile.gettempdir())
    if not any(a.endswith((".cpp", ".cu")) and os.path.isfile(a) and os.path.realpath(a).startswith(tmp + os.sep)
               for a in command):
        return ""
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return (run.stderr or "") + (run.stdout or "")


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
