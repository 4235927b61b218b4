"""Exporting a TVM candidate as a compiled library, built only in a sandbox.

``kstrata export`` (:mod:`kstrata.cli.export`) must not build candidate text in
kstrata's own process (TVMScript's parser and a schedule's replay run Python
from the candidate). :func:`build_library` therefore asks a fresh sandboxed
process (:func:`kstrata.sandbox.call_isolated`) to lower, schedule and build
the candidate exactly as :meth:`TVMBackend.load` does, and to write the module
with ``export_library`` into its private ``/tmp``; the shared library's bytes
come back (base64 in the JSON answer) with the run plan and parameter names,
and the parent only writes them to files. Loading the library later is the
user's step (:data:`LOADER`).
"""

from __future__ import annotations

import base64
import os
import tempfile
from typing import Any

#: Seconds a sandboxed export may take (TVM import, lowering, build, link).
TIMEOUT_S = 600.0
#: The library's largest accepted size in bytes.
MAX_LIBRARY_BYTES = 48 << 20


def build_library(task: Any, sources: dict[str, str], backend: str, shape: dict[str, int]) -> dict[str, Any]:
    """Build ``sources`` for ``task`` at ``shape`` in a sandboxed process.

    Parameters
    ----------
    task:
        A :class:`kstrata.tasks.base.Task`.
    sources:
        The candidate's ``{level: text}`` (``graph``/``schedule``, or an LLVM
        ``source`` level with its header).
    backend:
        ``tvm-llvm`` or ``tvm-cuda`` (``tvm-opencl`` has no library: its
        kernels are OpenCL C built at load time).
    shape:
        The shape to build at (a shape-generic build runs at every shape its
        plan resolves; a static one only at this one).

    Returns
    -------
    dict
        ``library`` (bytes of the ``.so``), ``plan`` (JSON text of
        :class:`kstrata.backends.tvm.lower.Plan`), ``params`` (the Model's
        parameter and buffer names bound after the inputs, in order),
        ``shape``, ``symbolic`` (bool), ``target``.

    Raises
    ------
    kstrata.sandbox.IsolatedCallError
        When the build fails, times out, or the answer is malformed.
    ValueError
        For a backend without a library.
    """
    from kstrata.backends.tvm.isolated import task_record
    from kstrata.sandbox import IsolatedCallError

    if backend not in ("tvm-llvm", "tvm-cuda"):
        raise ValueError(f"{backend} has no compiled library to export (only tvm-llvm and tvm-cuda)")
    out = _export_call(backend, task_record(task), dict(sources), dict(shape))
    if not isinstance(out, dict) or "error" in out:
        raise IsolatedCallError(f"export build failed: {(out or {}).get('error', 'no answer')}"
                                if isinstance(out, dict) else "export build gave no answer")
    try:
        lib = base64.b64decode(out["library"], validate=True)
        plan, params = str(out["plan"]), [str(p) for p in out["params"]]
    except (KeyError, TypeError, ValueError) as e:
        raise IsolatedCallError(f"export answer is malformed: {e}") from None
    if not lib or len(lib) > MAX_LIBRARY_BYTES:
        raise IsolatedCallError(f"export answer holds a library of {len(lib)} bytes")
    return {"library": lib, "plan": plan, "params": params, "shape": dict(shape),
            "symbolic": bool(out.get("symbolic")), "target": str(out.get("target", ""))}


def _export_call(backend: str, task: dict[str, Any], sources: dict[str, str], shape: dict[str, int]) -> Any:
    from kstrata.sandbox import IsolatedCallError, SandboxUnavailable, call_isolated

    try:
        return call_isolated("kstrata.backends.tvm.export:build_library_inside", backend=backend,
                             timeout_s=TIMEOUT_S, task=task, sources=sources, backend_name=backend, shape=shape)
    except SandboxUnavailable as e:
        raise IsolatedCallError(str(e)) from None


# -- sandbox side -------------------------------------------------------------------------
def build_library_inside(task: dict[str, Any], sources: dict[str, str], backend_name: str,
                         shape: dict[str, int]) -> dict[str, Any]:
    """(Sandbox only.) Build the candidate as ``TVMBackend.load`` does and
    return the exported library (base64), plan and parameter names, or
    ``{"error": message}``."""
    try:
        from kstrata.backends.registry import get_backend
        from kstrata.backends.tvm import build as tb
        from kstrata.backends.tvm.isolated import _task_inside
        from kstrata.backends.tvm.lower import parse_graph

        b = get_backend(backend_name)
        t = _task_inside(task)
        full = t.full_shape({k: int(v) for k, v in shape.items()})
        text = sources.get("source") or ""
        if text.strip():
            kind, _src_shape, plan, _ = tb.parse_source_header(text)
            if kind != "llvm":
                return {"error": f"a {kind} source level cannot be exported as a library; export its graph "
                                 "and schedule (drop the source level)"}
            module = tb.load_llvm_ir(text)
            params = list(parse_graph(sources["graph"])[0].params) if sources.get("graph") else []
        else:
            lowered, module = b._built(t, sources, full)
            plan, params = lowered.plan, list(lowered.header.params)
        with tempfile.TemporaryDirectory(prefix="kstrata_export_") as d:
            path = os.path.join(d, "kernel.so")
            module.export_library(path)
            with open(path, "rb") as f:
                lib = f.read()
        return {"library": base64.b64encode(lib).decode("ascii"), "plan": plan.to_json(), "params": params,
                "symbolic": bool(plan.symbolic), "target": b.kind}
    except Exception as e:  # noqa: BLE001 - reported to the parent as data
        return {"error": f"{type(e).__name__}: {str(e)[:2000]}"}
