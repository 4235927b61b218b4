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

The parent-side wrappers are :func:`primfunc_context`,
:func:`replay_after_graph_change` and :func:`schedule_expansion` (the
built-in proposer's schedule variants of a candidate and, once per graph, its
MetaSchedule tuning: one sandboxed process per expansion); the first two never
raise for a candidate that does not lower (the text or report says why). The functions named ``*_inside``
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

from kstrata.backends.tvm.structure import checked_structure, graph_structure

#: Seconds one sandboxed lowering may take (process start, TVM import, lowering).
TIMEOUT_S = 180.0
#: Characters of TensorIR text a prompt gets at most.
MAX_CONTEXT_CHARS = 12000
_HERE = "kstrata.backends.tvm.isolated"
#: (backend, task digest, graph) -> what the sandbox answered (lowering is deterministic;
#: a schedule agent asked again about the same graph starts no new process)
_CONTEXT: OrderedDict[str, dict[str, Any]] = OrderedDict()
_CONTEXT_SIZE = 64
#: Seconds a sandboxed expansion may take on top of :data:`TIMEOUT_S` when it also
#: tunes with MetaSchedule (the trials are built and run inside it).
TUNE_TIMEOUT_S = 1200.0
#: (backend, task digest, graph, schedule, gpu) -> the schedule variants the sandbox
#: answered (deterministic: an expansion of the same candidate starts no new process)
_VARIANTS: OrderedDict[str, list[dict[str, str]]] = OrderedDict()
_VARIANTS_SIZE = 256
#: Variants per answer and characters per variant text accepted at most.
MAX_VARIANTS = 2000
MAX_TEXT_CHARS = 200_000


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
    out = _lowered_answer(task, sources, backend, timeout_s)
    if out.get("error") and out.get("transient"):  # kstrata's process failed, not the graph (queue round rt82)
        return (f"(the PrimFuncs cannot be shown this time: kstrata's sandboxed lowering process failed "
                f"({out['error']}); that is kstrata's failure, not a finding about the graph)")
    if out.get("error"):
        return f"(the graph does not lower: {out['error']})"
    parts = [f"# PrimFunc {name}\n{script}" for name, script in out.get("funcs", [])]
    text = "\n\n".join(parts)
    if len(text) > MAX_CONTEXT_CHARS:
        text = text[:MAX_CONTEXT_CHARS] + "\n# ... (truncated)"
    note = ("The graph lowers to these PrimFuncs (TensorIR at the nominal shape; "
            "a schedule function `schedule_<name>(sch)` works on PrimFunc `<name>` "
            "as its `main`, with the block names below):\n```python\n" + text + "\n```")
    defaults = out.get("defaults")
    if defaults:  # queue round rt58 (tvm-cuda): the schedule said "default GPU schedule" and never showed it
        if len(defaults) > MAX_CONTEXT_CHARS:
            defaults = defaults[:MAX_CONTEXT_CHARS] + "\n# ... (truncated)"
        note += ("\n\nA PrimFunc that no `schedule_<name>` function of the schedule names gets TVM's default GPU "
                 "schedule (dlight's rules, or kstrata's vectorized elementwise recipe), built at each tested "
                 "shape; at the nominal shape it is the schedule below. A `schedule_<name>` you write replaces "
                 "that PrimFunc's default whole, so it must bind every block's loops to threads itself "
                 "(this text is a starting point you may copy and change):\n```python\n"
                 + defaults.strip() + "\n```")
    return note


def primfunc_structure(task: Any, sources: dict[str, str], backend: str,
                       timeout_s: float = TIMEOUT_S) -> dict[str, dict[str, int]] | None:
    """Blocks and open loops of each PrimFunc ``sources``' graph lowers to
    (:func:`kstrata.backends.tvm.structure.graph_structure`), from the same
    sandboxed lowering as :func:`primfunc_context` (one process per graph
    text); ``None`` when the graph does not lower or the structure is unknown."""
    out = _lowered_answer(task, sources, backend, timeout_s)
    return out.get("structure") or None


def _lowered_answer(task: Any, sources: dict[str, str], backend: str, timeout_s: float) -> dict[str, Any]:
    """The checked answer of :func:`primfunc_scripts_inside` for ``sources``'
    graph, cached per graph text; ``{"error": why}`` when it does not lower."""
    from kstrata.sandbox import IsolatedCallError

    key = hashlib.sha256(json.dumps([backend, task.digest, sources.get("graph") or ""]).encode()).hexdigest()
    out = _CONTEXT.get(key)
    if out is None:
        try:
            kind = backend.removeprefix("tvm-")  # GPU targets: what runs where a schedule names no PrimFunc
            out = _context_answer(_call("primfunc_scripts_inside", backend, timeout_s, task=task_record(task),
                                        sources=_text_sources(sources),
                                        gpu_target=kind if kind in ("cuda", "opencl") else None))
        except IsolatedCallError as e:  # not cached: a timeout or a lost process may not recur
            return {"error": _first_line(str(e)), "transient": True}
        _CONTEXT[key] = out
        while len(_CONTEXT) > _CONTEXT_SIZE:
            _CONTEXT.popitem(last=False)
    _CONTEXT.move_to_end(key)
    return out


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
        (``[{"func", "code", "error"}]``), ``structure`` (blocks and open
        loops per PrimFunc, :func:`kstrata.backends.tvm.structure.graph_structure`),
        ``unscheduled`` (PrimFuncs with open loops and no applied step), and
        ``error`` (why nothing could be replayed) or ``reset`` (True) where they apply.
    """
    from kstrata.sandbox import IsolatedCallError

    try:
        out = _replay_answer(_call("replay_inside", backend, timeout_s, task=task_record(task),
                                   sources=_text_sources(sources), schedule=schedule))
    except IsolatedCallError as e:
        out = {"schedule": schedule, "report": {"error": _first_line(str(e))[:500], "applied": 0,
                                                "failed": [], "funcs": []}}
    return str(out["schedule"]), dict(out["report"])


def schedule_expansion(task: Any, sources: dict[str, str], backend: str, *, gpu: bool = False,
                       tune: dict[str, Any] | None = None, timeout_s: float = TIMEOUT_S,
                       tune_timeout_s: float = TUNE_TIMEOUT_S) -> tuple[list[dict[str, str]], dict[str, Any] | None]:
    """The built-in proposer's work on a candidate for one ``schedule`` expansion.

    The schedule rules' variants of the candidate (its graph lowered at the
    task's nominal shape, its schedule replayed, every rule tried: see
    :func:`kstrata.backends.tvm.rules.schedule_variants`) and, when ``tune`` asks
    for it, MetaSchedule's best schedule for its graph
    (:func:`kstrata.backends.tvm.tune.tune`), each computed in a sandboxed process
    (:func:`schedule_expansion_inside`), the tuning in one given the graph alone:
    its result is kept under a key of the graph, so the candidate's schedule
    (code its replay runs) must not run where it is chosen. Variants are cached here by (backend,
    task digest, graph, schedule, ``gpu``); tuned schedules in
    :func:`kstrata.backends.tvm.tune.default_cache_dir`, keyed by
    :func:`kstrata.backends.tvm.tune.cache_key` (computed here, never taken from
    the sandbox), the cache the MetaSchedule baseline reads too.

    Parameters
    ----------
    task:
        A :class:`kstrata.tasks.base.Task`.
    sources:
        The candidate's ``{level: text}`` (``graph``, ``schedule``).
    backend:
        Registry name of the TVM backend (``tvm-llvm``, ``tvm-opencl``, ``tvm-cuda``).
    gpu:
        The target needs thread binding (the backend's ``gpu_like``).
    tune:
        ``{"shape": {name: int}, "trials": int}`` to tune the graph at that shape
        too; None: no tuning.
    timeout_s, tune_timeout_s:
        Wall-clock limits (s) of the sandboxed call; the second is added when tuning.

    Returns
    -------
    (variants, tuned)
        ``variants``: ``[{"text", "rule", "func", "description"}, ...]`` in the
        rules' order (``text``: the whole new schedule). ``tuned``: None when not
        asked or when tuning failed, else ``{"sources": {"graph", "schedule"},
        "records": [{"func", "run_secs", "trials"}], "key": str, "cached": bool}``
        (the graph marked ``# build: static``, as :func:`~kstrata.backends.tvm.tune.tune`
        returns it).

    Raises
    ------
    kstrata.sandbox.IsolatedCallError
        When the graph does not lower or the schedule text does not parse (the
        message says why), or the sandboxed process failed.
    """
    from kstrata.sandbox import IsolatedCallError

    text = _text_sources(sources)
    text.pop("source", None)
    key = hashlib.sha256(json.dumps([backend, task.digest, text.get("graph") or "", text.get("schedule") or "",
                                     bool(gpu)]).encode()).hexdigest()
    variants = _VARIANTS.get(key)
    tuned, tune_key, tune_path = None, "", None
    if tune is not None:
        tune_key, tune_path = _tune_cache(task, text, tune, backend)
        tuned = _read_tuned(tune_path, tune_key)
    want_tune = tune is not None and tuned is None
    if variants is None:
        kwargs: dict[str, Any] = {"task": task_record(task), "sources": text, "gpu": bool(gpu), "variants": True}
        if gpu:  # the GPU recipes build each variant for the backend's target kind
            kwargs["gpu_target"] = backend.removeprefix("tvm-")
        out = _expansion_answer(_call("schedule_expansion_inside", backend, timeout_s, **kwargs))
        if "error" in out:
            raise IsolatedCallError(out["error"])
        variants = out["variants"]
        _VARIANTS[key] = variants
        while len(_VARIANTS) > _VARIANTS_SIZE:
            _VARIANTS.popitem(last=False)
    _VARIANTS.move_to_end(key)
    if want_tune:
        # in a process of its own, given the graph alone: the tuned schedule is kept under a key of the
        # graph (tune.cache_key), so no other text may run where it is chosen. In the variants' process the
        # candidate's schedule (Python, run by its replay) replaced tune() and chose what the cache kept for
        # every later candidate of that graph, the shipped one's included (red-team round of 2026-12-04)
        graph_only = {"graph": text.get("graph") or ""}
        try:
            out = _expansion_answer(_call(
                "schedule_expansion_inside", backend, timeout_s + tune_timeout_s, task=task_record(task),
                sources=graph_only, gpu=bool(gpu), variants=False,
                tune={"shape": {k: int(v) for k, v in dict(tune["shape"]).items()},
                      "trials": int(tune["trials"]), "backend": backend}))
        except IsolatedCallError:  # tuning can take its process down (MetaSchedule, a segfault): no tuning
            out = {}
        if isinstance(out.get("tune"), dict) and "schedule" in out["tune"]:
            tuned = _store_tuned(tune_path, tune_key, text, out["tune"])
    return [dict(v) for v in variants], tuned


def _tune_cache(task: Any, sources: dict[str, str], tune: dict[str, Any], backend: str) -> tuple[str, Path | None]:
    """MetaSchedule's cache key and file for ``sources``' graph (``("", None)`` where
    no key can be made here, e.g. TVM's target cannot be built)."""
    from kstrata.backends.registry import get_backend
    from kstrata.backends.tvm.tune import cache_key, default_cache_dir

    try:
        shape = task.full_shape({k: int(v) for k, v in dict(tune["shape"]).items()})
        key = cache_key(task, sources.get("graph") or "", shape, get_backend(backend).target(), int(tune["trials"]))
    except Exception:  # noqa: BLE001 - no cache then; the sandbox still tunes
        return "", None
    return key, default_cache_dir() / f"{key}.json"


def _read_tuned(path: Path | None, key: str) -> dict[str, Any] | None:
    """A tuned result from the cache file (data only: text and numbers), or None."""
    if path is None or not path.is_file():
        return None
    try:
        from kstrata.jsontext import loads

        data = loads(path.read_text())
        src = data["sources"]
        if not (isinstance(src, dict) and all(isinstance(v, str) for v in src.values())
                and isinstance(src.get("schedule"), str)):
            return None
        return {"sources": dict(src), "records": list(data.get("records", [])), "key": key, "cached": True}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _store_tuned(path: Path | None, key: str, sources: dict[str, str], answer: dict[str, Any]) -> dict[str, Any]:
    """The tuned result as :func:`~kstrata.backends.tvm.tune.tune` makes it (graph
    marked ``# build: static``, made here from the candidate's graph: only the
    schedule text comes from the sandbox), written to its cache file atomically."""
    import re

    from kstrata.atomic import write_atomic

    out = {k: v for k, v in sources.items() if k != "source"}
    out["graph"] = re.sub(r"^# build:.*$", "# build: static", out.get("graph", ""), count=1, flags=re.MULTILINE)
    out["schedule"] = answer["schedule"]
    records = answer["records"]
    if path is not None:
        try:
            write_atomic(path, json.dumps({"sources": out, "records": records, "key": key}))
        except OSError:
            pass
    return {"sources": out, "records": records, "key": key, "cached": False}


def _expansion_answer(out: Any) -> dict[str, Any]:
    """The sandbox's expansion answer, checked like :func:`_context_answer`:
    ``{"variants": [...]}`` or ``{"error": str}``, plus ``tune`` where asked
    (``{"schedule", "records"}`` or ``{"error"}``)."""
    from kstrata.sandbox import IsolatedCallError

    if not isinstance(out, dict):
        raise IsolatedCallError("the sandboxed expansion returned malformed data")
    clean: dict[str, Any] = {}
    if isinstance(out.get("error"), str):
        clean["error"] = out["error"][:2000]
    elif "variants" in out:
        vs = out["variants"]
        keys = ("text", "rule", "func", "description")
        if not (isinstance(vs, list) and len(vs) <= MAX_VARIANTS
                and all(isinstance(v, dict) and all(isinstance(v.get(k), str) for k in keys) for v in vs)
                and all(len(v["text"]) <= MAX_TEXT_CHARS for v in vs)):
            raise IsolatedCallError("the sandboxed expansion returned malformed variants")
        clean["variants"] = [{"text": v["text"], "rule": v["rule"][:200], "func": v["func"][:200],
                              "description": v["description"][:2000]} for v in vs]
    t = out.get("tune")
    if isinstance(t, dict) and isinstance(t.get("schedule"), str) and len(t["schedule"]) <= MAX_TEXT_CHARS:
        records = []
        for r in t.get("records", []) if isinstance(t.get("records"), list) else []:
            if not isinstance(r, dict):
                continue
            secs = r.get("run_secs") if isinstance(r.get("run_secs"), list) else []
            records.append({"func": str(r.get("func", ""))[:200],
                            "run_secs": [float(x) for x in secs[:64] if isinstance(x, (int, float))],
                            "trials": int(r["trials"]) if isinstance(r.get("trials"), int) else 0})
        clean["tune"] = {"schedule": t["schedule"], "records": records[:256]}
    elif isinstance(t, dict) and isinstance(t.get("error"), str):
        clean["tune"] = {"error": t["error"][:2000]}
    return clean


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
    clean: dict[str, Any] = {"funcs": [[n[:200], t[:MAX_CONTEXT_CHARS + 1]] for n, t in funcs]}
    if isinstance(out.get("defaults"), str):
        clean["defaults"] = out["defaults"][:MAX_CONTEXT_CHARS + 1]
    structure = checked_structure(out.get("structure"))
    if structure is not None:
        clean["structure"] = structure
    return clean


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
    structure = checked_structure(report.get("structure"))
    if structure is not None:
        clean["structure"] = structure
        unscheduled = report.get("unscheduled")
        if isinstance(unscheduled, list) and all(isinstance(f, str) for f in unscheduled):
            clean["unscheduled"] = [f[:200] for f in unscheduled if f[:200] in structure]
    return {"schedule": out["schedule"], "report": clean}


def _text_sources(sources: dict[str, Any]) -> dict[str, str]:
    return {k: v for k, v in dict(sources).items() if isinstance(v, str)}


def _first_line(text: str) -> str:
    """The first non-blank line of ``text``; where a Python traceback follows it, that line's text
    before the traceback and the traceback's last line, the exception (queue round rt82: a prompt read
    "the graph does not lower: sandboxed process did not start: the sandbox's zygote exited: Traceback
    (most recent call last):" and nothing of the error)."""
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    if not lines:
        return "no message"
    head, mark, _ = lines[0].partition("Traceback (most recent call last):")
    if mark or any(ln.startswith("Traceback (most recent call last)") for ln in lines[1:]):
        return f"{head.strip()} {lines[-1].strip()}".strip()
    return lines[0]


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


def primfunc_scripts_inside(task: dict[str, Any], sources: dict[str, str],
                            gpu_target: str | None = None) -> dict[str, Any]:
    """(Sandbox only.) The PrimFuncs ``sources``' graph lowers to at the nominal shape.

    Returns
    -------
    dict
        ``{"funcs": [[name, TensorIR script], ...], "structure": ...}`` with,
        for a ``gpu_target`` (``"cuda"``, ``"opencl"``), ``"defaults"``: the
        default GPU schedule text of every PrimFunc; or ``{"error": message}``
        when the graph does not lower.
    """
    try:
        lowered = _lower_inside(task, sources)
    except Exception as e:  # noqa: BLE001 - shown to the agent
        return {"error": f"{type(e).__name__}: {e}"}
    out = {"funcs": [[name, func.script()] for name, func in lowered.funcs.items()],
           "structure": graph_structure(lowered.funcs)}
    if gpu_target:
        out["defaults"] = _gpu_defaults_inside(lowered.funcs, gpu_target)
    return out


def _gpu_defaults_inside(funcs: dict[str, Any], gpu_target: str) -> str:
    """(Sandbox only.) The default GPU schedule of ``funcs`` at the nominal
    shape as schedule text (:func:`kstrata.backends.tvm.schedule.default_gpu_schedule`),
    or one line saying why there is none."""
    from kstrata.backends.tvm.build import make_target
    from kstrata.backends.tvm.schedule import default_gpu_schedule

    try:
        return default_gpu_schedule(funcs, make_target(gpu_target))
    except Exception as e:  # noqa: BLE001 - shown to the agent
        return f"# (no default GPU schedule: {type(e).__name__}: {str(e)[:300]})"


def replay_inside(task: dict[str, Any], sources: dict[str, str], schedule: str) -> dict[str, Any]:
    """(Sandbox only.) See :func:`replay_after_graph_change`.

    Returns
    -------
    dict
        ``{"schedule": text, "report": {...}}``.
    """
    from kstrata.backends.tvm.schedule import (
        ScheduleTextError,
        parse_schedule,
        render_schedule,
        replay_schedule,
    )

    try:
        lowered = _lower_inside(task, sources)
        _, applied, failed = replay_schedule(lowered.funcs, schedule)
    except Exception as e:  # noqa: BLE001 - the evaluation will report the graph error
        return {"schedule": schedule, "report": {"error": f"{type(e).__name__}: {e}"[:500], "applied": 0,
                                                 "failed": [], "funcs": []}}
    structure = graph_structure(lowered.funcs)
    touched = {s.func for s in applied if s.func}
    report: dict[str, Any] = {"applied": len(applied), "funcs": sorted(lowered.funcs),
                              "failed": [{"func": s.func, "code": s.code, "error": s.error} for s in failed],
                              "structure": structure,
                              "unscheduled": sorted(f for f, st in structure.items()
                                                    if st["open_loops"] and f not in touched)}
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


def _replaying_at_small_shapes(task: dict[str, Any], sources: dict[str, str], found: list[Any]) -> list[Any]:
    """The CPU variants (made at the nominal shape) whose schedule text also replays at every
    small shape of the task: a schedule that rfactors only where a loop extent divides the lanes
    makes its ``*_rf`` block at 4096 but not at 77, so a rule that names that block fails to
    build there (a quick-start run on 2026-12-04 spent 2 of 12 evaluations on such compile
    errors). A small shape that does not lower is skipped (its tests report it)."""
    from kstrata.backends.tvm.schedule import replay_schedule

    t = _task_inside(task)
    others = _lowered_at(t, sources, t.small_shapes)
    return [v for v in found if all(not replay_schedule(funcs, v.text)[2] for funcs in others)]


def _lowered_at(t: Any, sources: dict[str, str], shapes: list[dict[str, int]]) -> list[dict[str, Any]]:
    """The candidate's graph lowered at each of ``shapes`` (its PrimFuncs); a shape
    that does not lower is skipped (not the variant filters' to report: the
    verifier's tests at that shape do)."""
    from kstrata.backends.tvm.lower import default_graph, lower_graph

    out = []
    for shape in shapes:
        try:
            out.append(lower_graph(t, sources.get("graph") or default_graph(t), t.full_shape(shape)).funcs)
        except Exception:  # noqa: BLE001 - not this filter's to report
            continue
    return out


#: most GPU variants :func:`_building_at_check_shapes` checks per expansion (in order; an
#: expansion proposes the first few the run does not have, builtin.BuiltinProposer.per_expansion)
CHECKED_GPU_VARIANTS = 8


def check_shapes(t: Any) -> list[dict[str, int]]:
    """The shapes a GPU variant must build at besides the nominal one: the task's
    public (small) and sweep shapes and a size of 1 per size variable
    (:func:`kstrata.verify.plan.unit_shapes` over the sweep), all known without
    the run's secret; the hidden tests are near the sweep or at these sizes of 1."""
    from kstrata.verify.plan import unit_shapes

    out: list[dict[str, int]] = []
    for shape in [*t.small_shapes, *t.sweep_shapes, *unit_shapes(t, list(t.sweep_shapes or t.small_shapes))]:
        if shape and shape not in out and shape != t.nominal_shape:
            out.append(dict(shape))
    return out


def _building_at_check_shapes(task: dict[str, Any], sources: dict[str, str], found: list[Any],
                              target_kind: str, keep: int = CHECKED_GPU_VARIANTS) -> list[Any]:
    """The first ``keep`` GPU variants (made and built at the nominal shape) that also
    replay and build for the target at every :func:`check_shapes` shape. On the
    H200 (2026-12-05) every gpu_rows and dlight variant of cross_entropy failed to
    build at C=1, the verifier's size-1 test, and mean_dim's row variants at 13 of
    its 19 test shapes: each was an evaluation spent on a compile error, and the
    search kept nothing. A check shape that does not lower is skipped (the
    verifier's tests report it); the code is generated, not compiled
    (:func:`kstrata.backends.tvm.build.codegen_only`)."""
    from kstrata.backends.tvm import build as tb
    from kstrata.backends.tvm.schedule import replay_with_gpu_defaults

    t = _task_inside(task)
    target = tb.make_target(target_kind)
    others = _lowered_at(t, sources, check_shapes(t))

    def builds_everywhere(text: str) -> bool:
        for funcs in others:
            try:
                scheduled, _, _ = replay_with_gpu_defaults(funcs, text, target)
                with tb.codegen_only(target):
                    tb.build_module(scheduled, target)
            except Exception:  # noqa: BLE001 - any failure there (ScheduleTextError, BuildError, TVM's): it does not
                return False
        return True

    out = []
    for v in found:
        if len(out) >= keep:
            break
        if builds_everywhere(v.text):
            out.append(v)
    return out


def _distinct_on_the_build(task: dict[str, Any], sources: dict[str, str], found: list[Any]) -> list[Any]:
    """The CPU variants that change the code a shape-generic build runs: of those
    whose scheduled PrimFuncs, replayed on the graph lowered with symbolic shapes,
    are the same TensorIR, only the first is kept, and none that is the same as
    the candidate's own schedule there. The rules decide at the nominal shape,
    where a step guarded by a constant extent (``rfactor`` and ``vectorize``
    only where the lanes divide it) applies, but a symbolic build (tvm-llvm's
    default) skips it, so ``fuse_rows`` by 8 and by 16, with and without
    ``rfactor``, are one program there (the 7 recipes for rmsnorm's ``rows``
    graph were 2 programs, and an expansion proposes the first 4 recipes). A
    static graph, or one that does not lower symbolically, keeps every variant."""
    from kstrata.backends.tvm.lower import default_graph, lower_graph, parse_graph
    from kstrata.backends.tvm.schedule import replay_schedule

    t = _task_inside(task)
    graph = sources.get("graph") or default_graph(t)
    try:
        header = parse_graph(graph)[0]
        if header.build == "static" or header.static_shape is not None:
            return found
        lowered = lower_graph(t, graph, t.full_shape(t.nominal_shape), symbolic=True)
    except Exception:  # noqa: BLE001 - built per shape then: every variant stays
        return found
    if not lowered.symbolic:
        return found

    def program(text: str) -> str | None:
        funcs, _, failed = replay_schedule(lowered.funcs, text)
        return None if failed else "\n".join(funcs[n].script() for n in sorted(funcs))

    seen = {program(sources.get("schedule", ""))}
    out = []
    for v in found:
        key = program(v.text)
        if key is None or key not in seen:
            out.append(v)
            seen.add(key)
    return out


def schedule_expansion_inside(task: dict[str, Any], sources: dict[str, str], gpu: bool = False,
                              variants: bool = True, tune: dict[str, Any] | None = None,
                              gpu_target: str | None = None) -> dict[str, Any]:
    """(Sandbox only.) See :func:`schedule_expansion`.

    Returns
    -------
    dict
        ``{"variants": [{"text", "rule", "func", "description"}, ...]}`` (when
        ``variants``), or ``{"error": message}`` when the graph does not lower or
        the rules fail (then nothing is tuned); plus, when ``tune`` asks,
        ``"tune": {"schedule": text, "records": [...]}`` or ``{"error": message}``.
    """
    out: dict[str, Any] = {}
    if variants:
        from kstrata.backends.tvm.rules import schedule_variants

        try:
            lowered = _lower_inside(task, sources)
            found = schedule_variants(lowered.funcs, sources.get("schedule", ""), gpu=bool(gpu), target=gpu_target)
            if not gpu:
                found = _distinct_on_the_build(task, sources, _replaying_at_small_shapes(task, sources, found))
            else:
                found = _building_at_check_shapes(task, sources, found, gpu_target or "cuda")
        except Exception as e:  # noqa: BLE001 - the parent reports it as the expansion's error
            return {"error": f"{type(e).__name__}: {e}"[:2000]}
        out["variants"] = [{"text": v.text, "rule": v.rule, "func": v.func, "description": v.description}
                           for v in found]
    if tune:
        out["tune"] = _tune_inside(task, sources, tune)
    return out


def _tune_inside(task: dict[str, Any], sources: dict[str, str], tune: dict[str, Any]) -> dict[str, Any]:
    """MetaSchedule on ``sources``' graph (:func:`kstrata.backends.tvm.tune.tune`,
    its cache in this process's private ``/tmp``): the schedule and records."""
    import tempfile

    from kstrata.backends.tvm.tune import tune as metaschedule

    try:
        t = _task_inside(task)
        with tempfile.TemporaryDirectory(prefix="kstrata_tune_cache_") as d:
            result = metaschedule(t, {k: int(v) for k, v in tune["shape"].items()}, str(tune["backend"]),
                                  trials=int(tune["trials"]), sources=dict(sources), cache_dir=d)
    except Exception as e:  # noqa: BLE001 - no tuned proposal then
        return {"error": f"{type(e).__name__}: {e}"[:2000]}
    return {"schedule": result.sources["schedule"], "records": result.records}
