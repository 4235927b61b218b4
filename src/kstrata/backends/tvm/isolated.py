"""TVM work on candidate text for prompts and rebuilds, run only in a sandbox.

kstrata's own process never parses, imports or evaluates candidate text
(``DESIGN.md``, trust boundary): TVMScript's parser evaluates expressions
(a graph's ``R.func_attr({"note": print.__self__.exec(...)})`` runs Python
while it parses), and a schedule is Python that is executed step by step. So
what an agent's prompt needs from a candidate (the PrimFuncs its graph lowers
to, as TensorIR text) and the rebuild after a graph change (the parent's
schedule replayed on the new graph) are computed by the functions here, which
run inside a fresh sandboxed process through
:func:`kstrata.sandbox.call_isolated`: JSON in (the task's public record, the
candidate's sources as text), JSON out (text, names, counts).

The parent-side wrappers are :func:`primfunc_context` and
:func:`replay_after_graph_change`; they never raise for a candidate that does
not lower (the text or report says why). The functions named ``*_inside``
are the ones the sandbox runs; calling them in kstrata's own process would
defeat their purpose (``tests/sandbox`` checks that agents, search, serve and
cli never do).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

#: Seconds one sandboxed lowering may take (process start, TVM import, lowering).
TIMEOUT_S = 180.0
#: Characters of TensorIR text a prompt gets at most.
MAX_CONTEXT_CHARS = 12000
_HERE = "kstrata.backends.tvm.isolated"
#: (backend, task digest, graph) -> what the sandbox answered (lowering is deterministic;
#: a schedule agent asked again about the same graph starts no new process)
_CONTEXT: OrderedDict[str, dict[str, Any]] = OrderedDict()
_CONTEXT_SIZE = 64


# -- parent side --------------------------------------------------------------------------
def task_record(task: Any) -> dict[str, Any]:
    """The task as JSON for the sandbox: name, path, public source and metadata.

    Returns
    -------
    dict
        ``{"name", "path", "source", "meta"}`` (``meta`` as JSON-mode data).
    """
    return {"name": task.name, "path": str(task.path), "source": task.source,
            "meta": task.meta.model_dump(mode="json")}


def _call(function: str, backend: str, timeout_s: float, **kwargs: Any) -> Any:
    """``call_isolated`` for a function of this module; any failure (the call's,
    or no sandbox here) comes back as :class:`kstrata.sandbox.IsolatedCallError`."""
    from kstrata.sandbox import IsolatedCallError, SandboxUnavailable, call_isolated

    try:
        return call_isolated(f"{_HERE}:{function}", backend=backend, timeout_s=timeout_s, **kwargs)
    except SandboxUnavailable as e:
        raise IsolatedCallError(str(e)) from None
    except IsolatedCallError:
        raise
    except Exception as e:  # noqa: BLE001 - e.g. the process could not be spawned
        raise IsolatedCallError(f"{type(e).__name__}: {e}") from None


def primfunc_context(task: Any, sources: dict[str, str], backend: str,
                     timeout_s: float = TIMEOUT_S) -> str:
    """The ``schedule`` level's prompt note: the PrimFuncs the candidate's graph
    lowers to at the task's nominal shape, as TensorIR script.

    The lowering runs in a sandboxed process (:func:`primfunc_scripts_inside`).

    Parameters
    ----------
    task:
        A :class:`kstrata.tasks.base.Task`.
    sources:
        The candidate's ``{level: text}``; its ``graph`` (or the task's default graph).
    backend:
        Registry name (``tvm-llvm``, ``tvm-opencl``, ``tvm-cuda``).

    Returns
    -------
    str
        The note (at most :data:`MAX_CONTEXT_CHARS` of TensorIR), or one line
        saying that the graph did not lower and why. Never raises for a bad candidate.
    """
    from kstrata.sandbox import IsolatedCallError

    key = hashlib.sha256(json.dumps([backend, task.digest, sources.get("graph") or ""]).encode()).hexdigest()
    out = _CONTEXT.get(key)
    if out is None:
        try:
            out = _context_answer(_call("primfunc_scripts_inside", backend, timeout_s, task=task_record(task),
                                        sources=_text_sources(sources)))
        except IsolatedCallError as e:  # not cached: a timeout or a lost process may not recur
            return f"(the graph does not lower: {_first_line(str(e))})"
        _CONTEXT[key] = out
        while len(_CONTEXT) > _CONTEXT_SIZE:
            _CONTEXT.popitem(last=False)
    _CONTEXT.move_to_end(key)
    if out.get("error"):
        return f"(the graph does not lower: {out['error']})"
    parts = [f"# PrimFunc {name}\n{script}" for name, script in out.get("funcs", [])]
    text = "\n\n".join(parts)
    if len(text) > MAX_CONTEXT_CHARS:
        text = text[:MAX_CONTEXT_CHARS] + "\n# ... (truncated)"
    return ("The graph lowers to these PrimFuncs (TensorIR at the nominal shape; "
            "a schedule function `schedule_<name>(sch)` works on PrimFunc `<name>` "
            "as its `main`, with the block names below):\n```python\n" + text + "\n```")


def replay_after_graph_change(task: Any, sources: dict[str, str], schedule: str, backend: str,
                              timeout_s: float = TIMEOUT_S) -> tuple[str, dict[str, Any]]:
    """Replay the parent's ``schedule`` on a new graph; drop the steps that fail.

    Runs in a sandboxed process (:func:`replay_inside`).

    Parameters
    ----------
    task:
        A :class:`kstrata.tasks.base.Task`.
    sources:
        The new candidate's sources (its ``graph`` is lowered at the nominal shape).
    schedule:
        The parent's schedule text.
    backend:
        Registry name of the TVM backend.

    Returns
    -------
    (schedule, report)
        The schedule to keep (``schedule`` itself when every step applies or
        when the graph does not lower; else the applying steps, or an empty
        schedule when even those fail together) and the report:
        ``applied`` (count), ``funcs`` (PrimFunc names), ``failed``
        (``[{"func", "code", "error"}]``), and ``error`` (why nothing could be
        replayed) or ``reset`` (True) where they apply.
    """
    from kstrata.sandbox import IsolatedCallError

    try:
        out = _replay_answer(_call("replay_inside", backend, timeout_s, task=task_record(task),
                                   sources=_text_sources(sources), schedule=schedule))
    except IsolatedCallError as e:
        out = {"schedule": schedule, "report": {"error": _first_line(str(e))[:500], "applied": 0,
                                                "failed": [], "funcs": []}}
    return str(out["schedule"]), dict(out["report"])


def _context_answer(out: Any) -> dict[str, Any]:
    """The sandbox's answer, checked: the candidate ran in that process and may
    have forged it, so only its expected shape (strings, bounded) is accepted.

    Raises
    ------
    IsolatedCallError
        On anything else.
    """
    from kstrata.sandbox import IsolatedCallError

    if isinstance(out, dict) and isinstance(out.get("error"), str):
        return {"error": out["error"][:2000]}
    funcs = out.get("funcs") if isinstance(out, dict) else None
    if not (isinstance(funcs, list) and all(isinstance(f, list) and len(f) == 2 and all(isinstance(x, str) for x in f)
                                            for f in funcs)):
        raise IsolatedCallError("the sandboxed lowering returned malformed data")
    return {"funcs": [[n[:200], t[:MAX_CONTEXT_CHARS + 1]] for n, t in funcs]}


def _replay_answer(out: Any) -> dict[str, Any]:
    """The sandbox's replay answer, checked like :func:`_context_answer`."""
    from kstrata.sandbox import IsolatedCallError

    report = out.get("report") if isinstance(out, dict) else None
    if not (isinstance(out, dict) and isinstance(out.get("schedule"), str) and isinstance(report, dict)
            and isinstance(report.get("applied", 0), int) and isinstance(report.get("funcs", []), list)
            and isinstance(report.get("failed", []), list) and len(json.dumps(out)) < 1_000_000):
        raise IsolatedCallError("the sandboxed replay returned malformed data")
    failed = [{k: str(f.get(k, ""))[:2000] for k in ("func", "code", "error")}
              for f in report.get("failed", []) if isinstance(f, dict)]
    clean: dict[str, Any] = {"applied": report.get("applied", 0), "funcs": [str(f) for f in report.get("funcs", [])],
                             "failed": failed}
    if "error" in report:
        clean["error"] = str(report["error"])[:500]
    if report.get("reset"):
        clean["reset"] = True
    return {"schedule": out["schedule"], "report": clean}


def _text_sources(sources: dict[str, Any]) -> dict[str, str]:
    return {k: v for k, v in dict(sources).items() if isinstance(v, str)}


def _first_line(text: str) -> str:
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    return lines[0] if lines else "no message"


# -- sandbox side -------------------------------------------------------------------------
def _task_inside(record: dict[str, Any]) -> Any:
    """The task rebuilt from its record. Where its file is not visible in the
    sandbox (a user's task outside the bound directories) the public source
    is written to the sandbox's private ``/tmp`` and imported from there."""
    from kstrata.tasks.base import Task
    from kstrata.tasks.meta import TaskMeta

    path = Path(record["path"])
    try:
        same = path.is_file() and path.read_text() == record["source"]
    except OSError:
        same = False
    if not same:
        d = Path(os.environ.get("TMPDIR", "/tmp")) / "kstrata_task"
        d.mkdir(parents=True, exist_ok=True)
        path = d / (Path(record["path"]).name or f"{record['name']}.py")
        path.write_text(record["source"])
    return Task(name=record["name"], path=path, meta=TaskMeta.model_validate(record["meta"]),
                source=record["source"])


def _lower_inside(task: dict[str, Any], sources: dict[str, str]) -> Any:
    from kstrata.backends.tvm.lower import default_graph, lower_graph

    t = _task_inside(task)
    shape = t.full_shape(t.nominal_shape)
    return lower_graph(t, sources.get("graph") or default_graph(t), shape)


def primfunc_scripts_inside(task: dict[str, Any], sources: dict[str, str]) -> dict[str, Any]:
    """(Sandbox only.) The PrimFuncs ``sources``' graph lowers to at the nominal shape.

    Returns
    -------
    dict
        ``{"funcs": [[name, TensorIR script], ...]}``, or ``{"error": message}``
        when the graph does not lower.
    """
    try:
        lowered = _lower_inside(task, sources)
    except Exception as e:  # noqa: BLE001 - shown to the agent
        return {"error": f"{type(e).__name__}: {e}"}
    return {"funcs": [[name, func.script()] for name, func in lowered.funcs.items()]}


def replay_inside(task: dict[str, Any], sources: dict[str, str], schedule: str) -> dict[str, Any]:
    """(Sandbox only.) See :func:`replay_after_graph_change`.

    Returns
    -------
    dict
        ``{"schedule": text, "report": {...}}``.
    """
    from kstrata.backends.tvm.schedule import ScheduleTextError, parse_schedule, render_schedule, replay_schedule

    try:
        lowered = _lower_inside(task, sources)
        _, applied, failed = replay_schedule(lowered.funcs, schedule)
    except Exception as e:  # noqa: BLE001 - the evaluation will report the graph error
        return {"schedule": schedule, "report": {"error": f"{type(e).__name__}: {e}"[:500], "applied": 0,
                                                 "failed": [], "funcs": []}}
    report: dict[str, Any] = {"applied": len(applied), "funcs": sorted(lowered.funcs),
                              "failed": [{"func": s.func, "code": s.code, "error": s.error} for s in failed]}
    if not failed:
        return {"schedule": schedule, "report": report}
    keep: dict[str, list[str]] = {}
    for s in applied:
        keep.setdefault(s.func, []).append(s.code)
    module = keep.pop("", None)
    pruned = render_schedule({f: keep.get(f, []) for f in parse_schedule(schedule) if f and f in lowered.funcs},
                             f"replayed after a graph change; {len(failed)} step(s) dropped")
    if module:
        pruned += "\n\ndef schedule(sch):\n" + "".join(f"    {ln}\n" for ln in module)
    try:
        replay_schedule(lowered.funcs, pruned, strict=True)
    except ScheduleTextError:
        pruned, report["reset"] = render_schedule({}, "reset after a graph change"), True
    return {"schedule": pruned, "report": report}
