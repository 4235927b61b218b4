"""LLVM IR without its debug metadata, for an agent to read and edit.

TVM's LLVM code generator writes full debug information: a ``!dbg``
location on every instruction, ``#dbg_value`` records, and a
``!DISubprogram``/``!DILocalVariable`` node per function and variable. In the
IR of a tvm-llvm candidate's ``source`` level that is about half the lines
and more than half the text (queue rounds rt58, rt63, rt66: 717 of 1518
lines of fused_exp_mean), none of it about what the code computes or how fast.
:func:`strip_llvm_debug` removes it; the rest of the module is unchanged, so
the IR compiles to the same code.

The text is candidate text: it is only scanned line by line here, never
parsed by LLVM or evaluated in kstrata's process.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from kstrata.agents.llvm_fold import fold_llvm, unfold_llvm

#: a debug record (LLVM 19+) or a call of a debug intrinsic: the whole line goes
_RECORD = re.compile(r"^\s*(#dbg_\w+\(|(tail |notail )?call void @llvm\.dbg\.\w+\(|declare void @llvm\.dbg\.\w+\()")
#: a ``!dbg !N`` attachment of an instruction (``, !dbg !N``) or a function (`` !dbg !N``)
_ATTACH = re.compile(r"(,\s*|\s+)!dbg\s+!\d+")
_DEF = re.compile(r"^!(\d+)\s*=\s*(distinct\s+)?(.*)$")
_NAMED = re.compile(r"^!([A-Za-z_.$][\w.$-]*)\s*=")
_REF = re.compile(r"!(\d+)\b")


def _outside_strings(line: str, fn) -> str:
    """``line`` with ``fn`` applied to its parts outside double-quoted strings
    (LLVM writes a quote inside a string as ``\\22``, so quotes only delimit)."""
    parts = line.split('"')
    return '"'.join(fn(p) if i % 2 == 0 else p for i, p in enumerate(parts))


def _refs(line: str) -> set[str]:
    found: set[str] = set()
    _outside_strings(line, lambda p: found.update(_REF.findall(p)) or p)
    return found


def strip_llvm_debug(text: str) -> str:
    """``text`` (LLVM IR, with or without kstrata's ``;`` header lines)
    without debug information.

    Dropped: debug records and ``llvm.dbg.*`` calls and declarations, every
    ``!dbg !N`` attachment, the ``!llvm.dbg.cu`` named metadata, and every
    numbered metadata node nothing else kept refers to (the ``!DI*`` nodes and
    the tuples only they use). Kept: all code, attributes, and the metadata
    the code uses (``!prof``, ``!tbaa``, ``!llvm.loop``, module flags, ...).

    Returns ``text`` unchanged when it holds no ``!dbg`` or debug record, or
    when a kept node would still refer to a debug node (e.g. a loop's
    ``!DILocation``): then stripping could leave IR that LLVM rejects.
    Never raises.
    """
    if "!dbg" not in text and "#dbg_" not in text and "@llvm.dbg." not in text:
        return text
    lines = text.split("\n")
    body: list[str] = []
    defs: dict[str, str] = {}
    order: list[tuple[str, str]] = []  # ("line", text) or ("def", id), in the file's order
    for line in lines:
        if _RECORD.match(line):
            continue
        m = _DEF.match(line)
        if m:
            defs[m.group(1)] = line
            order.append(("def", m.group(1)))
            continue
        named = _NAMED.match(line)
        if named and named.group(1) == "llvm.dbg.cu":
            continue
        if not line.lstrip().startswith(";"):
            line = _outside_strings(line, lambda p: _ATTACH.sub("", p))
        body.append(line)
        order.append(("line", line))
    keep: set[str] = set()
    todo = [r for line in body if not line.lstrip().startswith(";") for r in _refs(line)]
    while todo:
        ref = todo.pop()
        if ref in keep or ref not in defs:
            continue
        keep.add(ref)
        todo.extend(_refs(defs[ref].split("=", 1)[1]))
    if any("!DI" in defs[r] or "DICompileUnit" in defs[r] for r in keep):
        return text
    out = [item if kind == "line" else defs[item] for kind, item in order if kind == "line" or item in keep]
    return "\n".join(out)


def editable_text(backend_name: str, level: str, text: str | None) -> str | None:
    """``text`` of ``level`` as its agent is shown it (:func:`editable_sources`)."""
    if backend_name == "tvm-llvm" and level == "source" and isinstance(text, str):
        return fold_llvm(strip_llvm_debug(text))[0]
    return text


def editable_sources(backend_name: str, sources: Mapping[str, str], level: str) -> dict[str, str]:
    """``sources`` as the agent of ``level`` is shown them and edits them: on
    tvm-llvm, for the ``source`` level, its LLVM IR without its debug metadata
    (:func:`strip_llvm_debug`) and with TVM's argument checking and helpers
    folded into one line (:func:`kstrata.agents.llvm_fold.fold_llvm`); every
    other level and backend as given. An edit's SEARCH text is matched
    against this text; :func:`restorer` puts the folded lines back into the
    answer's text, so the candidate the answer makes holds the IR without the
    metadata (the same code) and with every definition."""
    out = {k: v for k, v in sources.items()}
    if isinstance(out.get(level), str):
        out[level] = editable_text(backend_name, level, out[level])
    return out


def restorer(backend_name: str, sources: Mapping[str, str], level: str) -> Callable[[dict[str, str]], dict[str, str]]:
    """For an answer made from :func:`editable_sources` of ``sources``: the
    function that gives its new sources the lines folded out of the shown
    ``level`` text back (:func:`kstrata.agents.llvm_fold.unfold_llvm`); the
    identity where nothing was folded."""
    text = sources.get(level)
    if backend_name != "tvm-llvm" or level != "source" or not isinstance(text, str):
        return lambda new: new
    folded = fold_llvm(strip_llvm_debug(text))[1]

    def restore(new: dict[str, str]) -> dict[str, str]:
        if not folded or not isinstance(new.get(level), str):
            return new
        return {**new, level: unfold_llvm(new[level], folded)}
    return restore
