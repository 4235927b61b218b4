"""TVM's LLVM IR with its argument-checking boilerplate folded, for an agent to read and edit.

A tvm-llvm candidate's ``source`` level is the whole LLVM module TVM wrote.
Past its debug metadata (:mod:`kstrata.agents.llvm_debug`), more than half of
it is code no kernel change touches (queue rounds rt69, rt72: of layernorm's
1455 lines, 590 are ``@__tvm_ffi_layer_norm``, TVM's FFI entry that checks
each argument's type, shape, dtype and device, 47 lines its error-message
strings, 45 two ``@__tvm_set_raised_*`` helpers and 150 the fp16 conversion
helpers ``@__truncsfhf2``/``@__extendhfsf2``; the computing function is 507).

:func:`fold_llvm` moves those definitions out of the text the agent is shown
and puts one marker line (:data:`FOLD_MARK`) at its end in their place;
:func:`unfold_llvm` puts them back where the answer keeps the marker (or at
the end of an answer that dropped it). LLVM reads a module's top-level
definitions in any order, so the candidate holds the shown text with the
folded definitions after it: the line numbers of LLVM's messages about the
candidate are those of the text the agent was shown.

Candidate text is only scanned line by line here, never parsed by LLVM or
evaluated in kstrata's process.
"""

from __future__ import annotations

import re

#: the start of the line that stands for the folded definitions in the shown text
FOLD_MARK = "; kstrata-folded:"
#: a definition folded: TVM's FFI entry points and error helpers, and its fp16 conversion helpers
_FOLDED_DEFINE = re.compile(r'^define\b.*?@(__tvm_ffi_\w+|__tvm_set_raised_\w+)\('
                            r'|^define\b.*section "\.text\.tvm\.fp16\.conv"')
#: a string constant of the FFI entry's error messages
_STRING = re.compile(r"^@\.str(\.\d+)?\s*=\s*private\b.*\bconstant\b")
_NAME = re.compile(r"@([\w.$]+)\(")


def fold_llvm(text: str) -> tuple[str, str]:
    """``(shown, folded)``: ``text`` (LLVM IR) without the definitions of
    TVM's FFI entries (``@__tvm_ffi_*``), its error helpers
    (``@__tvm_set_raised_*``), its fp16 conversion helpers (section
    ``.text.tvm.fp16.conv``) and the ``@.str*`` constants, each with the
    ``; Function Attrs`` comment above it, and with one :data:`FOLD_MARK`
    line at the end naming what it stands for; and those definitions, in
    their order, as one text.

    Returns ``(text, "")`` when nothing is folded (IR without them, or any
    text that is not TVM's). Never raises.
    """
    lines = text.split("\n")
    shown: list[str] = []
    folded: list[str] = []
    names: list[str] = []
    strings = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        if _STRING.match(line):
            folded.append(line)
            strings += 1
            i += 1
            continue
        if _FOLDED_DEFINE.match(line):
            end = next((j for j in range(i + 1, len(lines)) if lines[j] == "}"), None)
            if end is None:  # not a whole definition: left as it is
                shown.append(line)
                i += 1
                continue
            if shown and shown[-1].startswith("; Function Attrs:"):
                folded.append(shown.pop())
            folded.extend(lines[i:end + 1])
            folded.append("")
            m = _NAME.search(line)
            names.append(f"@{m.group(1)}" if m else "a function")
            i = end + 1
            if i < len(lines) and not lines[i].strip() and shown and not shown[-1].strip():
                i += 1  # no double blank line where a definition was
            continue
        shown.append(line)
        i += 1
    if not folded:
        return text, ""
    while shown and not shown[-1].strip():
        shown.pop()
    what = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    if strings:
        what += f"; {strings} string constants (@.str*) of their error messages"
    shown += ["", f"{FOLD_MARK} {len(folded)} lines of TVM's argument checking and helpers no kernel change needs "
                  f"are not shown ({what}). kstrata puts them back in place of this line, unchanged: keep this "
                  "line last in the text, and do not define these names yourself.", ""]
    return "\n".join(shown), "\n".join(folded).rstrip("\n") + "\n"


def unfold_llvm(answer: str, folded: str) -> str:
    """``answer`` (the edited shown text) with ``folded`` (from
    :func:`fold_llvm`) in place of its :data:`FOLD_MARK` line; appended at
    the end when the answer has no such line and defines none of the folded
    names itself (a whole-text answer that dropped the marker); the answer
    as it is when it defines one of them (its own version is judged)."""
    if not folded:
        return answer
    lines = answer.split("\n")
    marks = [i for i, line in enumerate(lines) if line.startswith(FOLD_MARK)]
    if marks:
        out = lines[:marks[0]] + folded.rstrip("\n").split("\n") \
            + [line for line in lines[marks[0] + 1:] if not line.startswith(FOLD_MARK)]
        return "\n".join(out)
    defined = {m.group(1) for line in folded.split("\n") if _FOLDED_DEFINE.match(line) and (m := _NAME.search(line))}
    if any(_FOLDED_DEFINE.match(line) and (m := _NAME.search(line)) and m.group(1) in defined for line in lines):
        return answer
    return answer.rstrip("\n") + "\n\n" + folded
