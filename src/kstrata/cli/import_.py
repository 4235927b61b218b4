"""``kstrata import KERNEL_FILE --task T --backend B``: take a user's existing
Triton or TileLang kernel file (KernelBench format: ``ModelNew`` plus kernels)
as a candidate directory ``<out>/<task>--<backend>--<hash12>/``."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import typer

from kstrata.backends.registry import get_backend
from kstrata.backends.tilelang.backend import graph_plan
from kstrata.cli.errors import Console, user_errors
from kstrata.pysyntax import SourceTooLarge, not_python_file, read_source, syntax_error_isolated, syntax_error_text
from kstrata.shellarg import arg, task_arg
from kstrata.atomic import write_folder
from kstrata.tasks.base import TaskError
from kstrata.tasks.loader import resolve_task

console = Console()

#: a module-level ``class ModelNew`` line
_MODEL_NEW = re.compile(r"^class[ \t]+ModelNew\b", re.M)

#: backend -> the module a kernel file for it must import
DSL_MODULE = {"triton": "triton", "triton-interp": "triton",
              "tilelang-c": "tilelang", "tilelang-cuda": "tilelang"}


def read_model_file(path: Path, what: str = "kernel file") -> str:
    """The text of ``path``, a one-file candidate (KernelBench format: defines
    ``ModelNew``), after checks that never import, run or parse it in
    kstrata's process: it exists, is UTF-8 text without NUL bytes, has a
    module-level ``class ModelNew`` line, and parses as Python in a child
    process (:func:`kstrata.pysyntax.syntax_error_isolated`).

    Raises
    ------
    TaskError
        Naming the file (and, for a syntax error, the line) when a check fails.
    """
    if path.is_dir():  # newcomer nc17: a folder was called "no such file"
        raise TaskError(f"{path}: a directory, not a file; give the kernel's .py file")
    if not path.is_file():
        raise TaskError(f"{path}: no such file")
    other = not_python_file(path, "the .py file that defines ModelNew")
    if other:
        raise TaskError(other)
    try:
        text = read_source(path)
    except UnicodeDecodeError as e:
        raise TaskError(f"{path}: not a UTF-8 text file: {e}") from None
    except SourceTooLarge as e:
        raise TaskError(str(e)) from None
    # kstrata's own process never parses candidate text (DESIGN.md, trust boundary): line patterns
    # here, the syntax in a child process
    if "\x00" in text:
        raise TaskError(f"{path}: not a Python file (it holds a NUL byte)")
    # the syntax first: a syntax error above the class (or in its line) hid it from the line pattern, and the
    # message said "defines no class ModelNew" instead of naming the line (newcomer nc16)
    bad = syntax_error_isolated(text, str(path))
    if bad is not None:
        raise TaskError(f"{syntax_error_text(str(path), bad)}; fix the {what} and try again (nothing was "
                        "imported or started)")
    missing = no_model_new(path, text)
    if missing:
        raise TaskError(missing)
    return text


def no_model_new(path: Path | str, text: str, named_anywhere: bool = False) -> str | None:
    """Why ``text`` (the file ``path``) is no KernelBench candidate: it has no
    module-level ``class ModelNew`` line (with ``named_anywhere``: the name
    ``ModelNew`` appears nowhere in it, so nothing can define it, e.g.
    ``ModelNew = MyModel`` passes); the message names the module-level classes
    it does define. Told from lines, never parsed or imported here. None when
    the check passes."""
    if _MODEL_NEW.search(text) or (named_anywhere and re.search(r"\bModelNew\b", text)):
        return None
    found = list(dict.fromkeys(re.findall(r"^class[ \t]+(\w+)", text, re.M)))
    has = (f"; it defines {', '.join(f'class {c}' for c in found[:5])}{', ...' if len(found) > 5 else ''}: the "
           "kernel's module must be named ModelNew") if found else ""
    return (f"{path}: defines no class ModelNew (KernelBench format: ModelNew takes the task Model's constructor "
            f"arguments and forward signature){has}")


def read_kernel_file(path: Path, backend: str) -> str:
    """The text of ``path``, a Triton or TileLang kernel file, after
    :func:`read_model_file`'s checks and a check that it imports the
    backend's DSL.

    Raises
    ------
    TaskError
        If the file is missing, not UTF-8 Python, does not parse (the message
        names the line), has no ``ModelNew`` class, or does not import the
        backend's DSL.
    """
    if backend not in DSL_MODULE:
        raise TaskError(f"kstrata import takes Triton and TileLang kernel files, not {backend!r} ones; choose "
                        f"one of {', '.join(DSL_MODULE)} (a ModelNew file for {backend!r} goes straight to "
                        f"kstrata eval or kstrata optimize --initial)")
    text = read_model_file(path)
    dsl = DSL_MODULE[backend]
    if not re.search(rf"^[ \t]*(?:import[ \t]+{dsl}\b|from[ \t]+{dsl}(?:\.[\w.]+)?[ \t]+import\b)", text, re.M):
        raise TaskError(f"{path}: does not import {dsl}; is it a {backend} kernel file?")
    return text


#: ``ModelNew``'s ``def __init__(self, ...)`` on one line (a pattern, never a parse: DESIGN.md's trust boundary)
_INIT = re.compile(r"^[ \t]+def[ \t]+__init__[ \t]*\(([^()\n]*(?:\([^()\n]*\)[^()\n]*)*)\)[^:\n]*:", re.M)
#: where a module-level statement starts (ends ModelNew's body)
_TOP = re.compile(r"^\S", re.M)


def _top_level_split(text: str) -> list[str]:
    """``text`` split at the commas outside brackets (``a: tuple[int, int], b`` is two parts)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in parts + [cur] if p.strip()]


def constructor_note(text: str, task: Any) -> str | None:
    """A warning when ``ModelNew``'s constructor, read by pattern from
    ``text`` (a one-line ``def __init__(self, ...)``; never imported or
    parsed here), cannot take ``task``'s init inputs (kstrata builds
    ``ModelNew(*get_init_inputs())``, as ``Model``), e.g. an RMSNorm kernel's
    ``__init__(self, dim)`` imported for softmax, whose ``Model()`` takes
    none; ``None`` when it can or when the pattern cannot tell (``*args``, a
    signature over several lines). The task module is the user's trusted
    task, loaded as ``kstrata eval`` loads it."""
    cls = _MODEL_NEW.search(text)
    if cls is None:
        return None
    end = _TOP.search(text, cls.end())
    m = _INIT.search(text[:end.start()] if end else text, cls.end())
    if m is None:
        return None
    params = _top_level_split(m.group(1))[1:]  # without self
    if any(p.startswith("*") or p == "/" for p in params):
        return None
    required = sum(1 for p in params if "=" not in p)
    shape = task.small_shapes[0] if task.small_shapes else None
    from kstrata.tasks.signature import call_signature  # the task's code runs there, not the CLI's

    init, _ = call_signature(task, shape or {})
    if required <= len(init) <= len(params):
        return None
    names = ", ".join(p.split(":")[0].split("=")[0].strip() for p in params) or "no arguments"
    return (f"ModelNew.__init__ takes ({names}), but kstrata builds it with {task.name}'s init inputs, "
            f"{len(init)} of them (Model(*get_init_inputs())); is this a {task.name} kernel? "
            "(kstrata eval will say for certain)")


def import_kernel(path: Path, task_name: str, backend: str, out: Path) -> Path:
    """Validate ``path`` and write it as a candidate directory under ``out``.

    The directory holds ``source.py``, for TileLang also ``schedule.json`` and
    ``graph.txt`` (levels, see :mod:`kstrata.backends.tilelang.backend`), and
    ``candidate.json`` (task, task digest, backend, levels, content hash,
    origin); written together or not at all (:func:`kstrata.atomic.write_folder`).
    Importing the same file again is a no-op.

    Raises
    ------
    TaskError
        For an unknown task or a bad kernel file (see :func:`read_kernel_file`).
    kstrata.backends.registry.UnknownBackendError
        For an unknown backend.
    """
    get_backend(backend)
    task = resolve_task(task_name)
    text = read_kernel_file(path, backend)
    sources = {"source": text}
    if DSL_MODULE[backend] == "tilelang":
        # no overrides: the kernel's own SCHEDULE line holds the values (the tuner reads it by pattern)
        sources["schedule"] = "{}"
        sources["graph"] = graph_plan(text)
    digest = hashlib.sha256(json.dumps(sources, sort_keys=True).encode()).hexdigest()
    cand = out / f"{task.name}--{backend}--{digest[:12]}"
    names = {"source": "source.py", "schedule": "schedule.json", "graph": "graph.txt"}
    meta = {"task": task.name, "task_digest": task.digest, "backend": backend,
            "levels": {k: names[k] for k in sources}, "sha256": digest,
            "origin": {"kind": "import", "path": str(path.resolve())}}
    files = {names[level]: body for level, body in sources.items()}
    files["candidate.json"] = json.dumps(meta, indent=2, sort_keys=True)
    write_folder(cand, files)  # all or nothing: a full disk leaves no import without its candidate.json
    return cand


#: where ``kstrata import`` writes without ``--out``: a folder of the current directory
DEFAULT_OUT = Path("candidates")


def register(app: typer.Typer) -> None:
    """Add the ``import`` command to ``app``."""

    @app.command("import")
    def import_cmd(
        kernel_file: Path = typer.Argument(..., metavar="KERNEL_FILE", help="A Triton or TileLang file defining ModelNew."),
        task: str = typer.Option(..., "--task", "-t", help="Suite task name or task file."),
        backend: str = typer.Option(..., "--backend", "-b",
                                    help="triton, triton-interp, tilelang-c or tilelang-cuda."),
        out: Path = typer.Option(DEFAULT_OUT, "--out", "-o",
                                 help="Folder that receives the candidate directory (default: ./candidates in the "
                                      "current directory)."),
    ) -> None:
        """Import an existing kernel file as a candidate for TASK on BACKEND."""
        with user_errors():
            cand = import_kernel(kernel_file, task, backend, out)
            t = resolve_task(task)
            note = constructor_note(read_kernel_file(kernel_file, backend), t)
        console.print(f"[green]✓[/] imported {kernel_file} as {cand} (checked as text: it parses and imports "
                      f"{DSL_MODULE[backend]}; nothing of it was run)", highlight=False, soft_wrap=True)
        # where it went: the default --out is a folder of the current directory (newcomer nc23: a candidates/
        # folder appeared there unannounced)
        console.print(f"  written to {cand.resolve()}"
                      + (" (./candidates/ in the current directory, the default --out)" if out == DEFAULT_OUT
                         else ""), markup=False, highlight=False, soft_wrap=True)
        if note:
            console.print(f"[yellow]warning:[/] {note}", highlight=False, soft_wrap=True)
        what = "verify it" if backend == "triton-interp" else "verify it and time it against eager PyTorch"
        named = task_arg(task)  # a task file by its path, which its name alone would not find (nc14)
        console.print(f"next: kstrata eval {named} {arg(cand)}   ({what}; the backend is the import's; "
                      "--scope small for a quick check)", markup=False, highlight=False, soft_wrap=True)
        console.print(f"  or: kstrata optimize {named} --backend {arg(backend)} --initial {arg(cand)}   (search from it)",
                      markup=False, highlight=False, soft_wrap=True)
