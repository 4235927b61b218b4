"""Which tasks lower and run on each TVM target, and why not (used by
``benchmarks/tvm_coverage.py`` and the tests).

This is a smoke check against the PyTorch reference with ``torch.allclose``
at dtype-based tolerances, not the verifier's protocol (``kstrata.verify``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch

from kstrata.backends.base import Backend, CandidateLoadError
from kstrata.tasks.base import Task

#: (rtol, atol) per task dtype for the smoke comparison.
TOLERANCES = {"float32": (1e-3, 1e-3), "float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2)}


@dataclass
class Outcome:
    """One task on one backend: ``status`` is ``ok``, ``no-lowering``,
    ``build-error``, ``wrong`` or ``error``; ``reason`` says why."""

    task: str
    backend: str
    status: str
    reason: str = ""
    seconds: float = 0.0


def close(out: Any, ref: Any, dtype: str, exact: bool = False) -> tuple[bool, str]:
    """Compare an output (tensor or tuple) with the reference; (ok, max error text)."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    if len(outs) != len(refs):
        return False, f"{len(outs)} outputs, reference has {len(refs)}"
    rtol, atol = TOLERANCES.get(dtype, TOLERANCES["float32"])
    for o, r in zip(outs, refs):
        o, r = o.detach().cpu(), r.detach().cpu()
        if tuple(o.shape) != tuple(r.shape):
            return False, f"shape {tuple(o.shape)} != reference {tuple(r.shape)}"
        if exact or not r.is_floating_point():
            if not torch.equal(o.to(r.dtype), r):
                return False, "not equal to the reference"
            continue
        if not torch.allclose(o.float(), r.float(), rtol=rtol, atol=atol, equal_nan=True):
            err = (o.float() - r.float()).abs().max().item()
            return False, f"max abs error {err:.3g} (rtol={rtol}, atol={atol})"
    return True, ""


def run_once(backend: Backend, task: Task, sources: dict[str, str], shape: dict[str, int],
             seed: int = 0) -> tuple[bool, str]:
    """Load ``sources`` at ``shape`` and compare one call with the reference."""
    model, inputs, init_inputs, _ = task.instantiate(shape, seed)
    with torch.no_grad():
        ref = model(*inputs)
    torch.manual_seed(seed)  # the candidate draws the same weights
    fn = backend.load(task, sources, shape, init_inputs)
    out = fn(*[x.to(backend.device) if isinstance(x, torch.Tensor) else x for x in inputs])
    return close(out, ref, task.meta.dtype, task.meta.tolerance.kind == "exact")


def check_task(backend: Backend, task: Task, shapes: list[dict[str, int]] | None = None,
               run: bool = True) -> Outcome:
    """Initial sources of ``task`` on ``backend``, built (and run when ``run``) at ``shapes``.

    With ``run=False`` (no device) the target code is generated and, for
    ``tvm-cuda``, compiled with nvcc.
    """
    t0 = time.perf_counter()
    shapes = shapes if shapes is not None else task.small_shapes
    try:
        sources = backend.initial_sources(task)
    except NotImplementedError as e:
        return Outcome(task.name, backend.name, "no-lowering", str(e).split(": ", 2)[-1],
                       time.perf_counter() - t0)
    try:
        for shape in shapes:
            if run:
                ok, why = run_once(backend, task, sources, shape)
                if not ok:
                    return Outcome(task.name, backend.name, "wrong", f"at {shape}: {why}",
                                   time.perf_counter() - t0)
            else:
                code = backend.generate_source(task, sources, shape)  # type: ignore[attr-defined]
                if backend.name == "tvm-cuda":
                    from kstrata.backends.tvm.build import nvcc_compile

                    nvcc_compile(code, fmt="ptx")
    except CandidateLoadError as e:
        return Outcome(task.name, backend.name, "build-error", str(e)[:300], time.perf_counter() - t0)
    except Exception as e:  # noqa: BLE001 - the report lists it
        return Outcome(task.name, backend.name, "error", f"{type(e).__name__}: {str(e)[:300]}",
                       time.perf_counter() - t0)
    return Outcome(task.name, backend.name, "ok", "", time.perf_counter() - t0)
