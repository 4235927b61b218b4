"""Worker-side helpers for the TileLang backends (run inside the TileLang env).

:func:`check_candidate` is a small correctness probe (load, run, compare with
the task reference at one shape) used by tests and ``kstrata import``; the
verdicts that count come from :mod:`kstrata.verify`. :func:`lower_for_cuda`
checks, without a GPU, that a ``tilelang-cuda`` candidate's kernels lower to
CUDA and compile with nvcc at a shape (for the shipped GPU forms' tests).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def check_candidate(backend_name: str, task_path: str, sources: dict[str, str],
                    shape: dict[str, int], seed: int = 0, atol: float = 1e-4,
                    rtol: float = 1e-4) -> dict[str, Any]:
    """Load ``sources`` with ``backend_name`` and compare to the reference at ``shape``.

    Returns
    -------
    dict
        ``{"stage": "load"|"run"|"compare", "ok": bool, "error": str,
        "max_abs_err": float}``: ``stage`` is where it stopped. Inputs are the
        task's ``get_inputs()`` with ``seed`` (float32 comparison, ``atol``/``rtol``).
    """
    import torch

    from kstrata.backends.base import CandidateLoadError
    from kstrata.backends.registry import get_backend
    from kstrata.tasks.loader import load_task

    backend = get_backend(backend_name)
    task = load_task(Path(task_path))
    model, inputs, init_inputs, _ = task.instantiate(shape, seed)
    with torch.no_grad():
        want = model(*inputs)
    torch.manual_seed(seed)
    try:
        fn = backend.load(task, sources, shape, init_inputs)
    except CandidateLoadError as e:
        return {"stage": "load", "ok": False, "error": str(e), "max_abs_err": float("nan")}
    dev = [x.to(backend.device) if isinstance(x, torch.Tensor) else x for x in inputs]
    try:
        with torch.no_grad():
            got = fn(*dev)
    except Exception as e:  # noqa: BLE001 - a candidate bug is data
        return {"stage": "run", "ok": False, "error": f"{type(e).__name__}: {e}",
                "max_abs_err": float("nan")}
    got, want = torch.as_tensor(got).cpu().float(), torch.as_tensor(want).float()
    if got.shape != want.shape:
        return {"stage": "compare", "ok": False, "max_abs_err": float("nan"),
                "error": f"shape {tuple(got.shape)} != reference {tuple(want.shape)}"}
    err = (got - want).abs().max().item() if got.numel() else 0.0
    ok = bool(torch.allclose(got, want, atol=atol, rtol=rtol, equal_nan=True))
    return {"stage": "compare", "ok": ok, "error": "" if ok else f"max abs err {err:.3g}",
            "max_abs_err": err}


def launch_probe(backend_name: str, task_path: str, sources: dict[str, str],
                 shape: dict[str, int], seed: int = 0) -> dict[str, Any]:
    """Load ``sources`` and run one forward call under each of the backend's
    launch hooks (what the verifier's ``kernel_launched`` / ``kernel_does_work``
    checks see), outside the verifier.

    Returns
    -------
    dict
        ``{"launches": int, "ok": bool, "noop_ok": bool | None}``: kernel
        launches counted during one call; whether that call matches the
        reference (``atol=rtol=1e-4``); whether it still does with every launch
        a no-op and ``torch.empty`` memory poisoned (None when the no-op call raised).
    """
    import torch

    from kstrata.backends.registry import get_backend
    from kstrata.tasks.loader import load_task

    backend = get_backend(backend_name)
    hooks = backend.launch_hooks
    task = load_task(Path(task_path))
    model, inputs, init_inputs, _ = task.instantiate(shape, seed)
    with torch.no_grad():
        want = model(*inputs).float()
    torch.manual_seed(seed)
    fn = backend.load(task, sources, shape, init_inputs)
    dev = [x.to(backend.device) if isinstance(x, torch.Tensor) else x for x in inputs]

    def matches(out: Any) -> bool:
        got = torch.as_tensor(out).cpu().float()
        return got.shape == want.shape and bool(torch.allclose(got, want, atol=1e-4, rtol=1e-4))

    with torch.no_grad():
        with hooks.count() as counter:
            ok = matches(fn(*dev))
        # as the verifier: torch.empty memory is NaN-filled, so unwritten outputs read NaN
        was = torch.are_deterministic_algorithms_enabled(), torch.utils.deterministic.fill_uninitialized_memory
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.utils.deterministic.fill_uninitialized_memory = True
        try:
            with hooks.noop():
                noop_ok: bool | None = matches(fn(*dev))
        except Exception:  # noqa: BLE001 - failing without its kernels is fine
            noop_ok = None
        finally:
            torch.use_deterministic_algorithms(was[0])
            torch.utils.deterministic.fill_uninitialized_memory = was[1]
    return {"launches": counter.launches, "ok": ok, "noop_ok": noop_ok}


def lower_for_cuda(task_path: str, source: str, shape: dict[str, int], arch: str = "sm_90a",
                   compile_cubin: bool = True, seed: int = 0) -> dict[str, Any]:
    """Run a ``tilelang-cuda`` candidate's ``ModelNew`` at ``shape`` with every
    kernel call replaced by lowering the kernel for CUDA: no GPU needed.

    Each ``@tilelang.jit`` factory call builds its ``T.prim_func`` as usual
    (``JITImpl.get_tir``), which is lowered with ``tilelang.lower`` for target
    ``{"kind": "cuda", "arch": arch}`` and, with ``compile_cubin``, compiled to
    a cubin by nvcc (``tilelang.contrib.nvcc.compile_cuda``, TileLang's own
    flags); the call then returns uninitialised outputs of the ``out_idx``
    buffers' shapes, so ``forward`` runs to the end and its output shape can be
    compared with the reference's (computed on the ``meta`` device). Only for
    trusted code (the shipped kernels): ``source`` is imported here.

    Returns
    -------
    dict
        ``{"ok": bool, "error": str, "kernels": [{"kernel": str, "args": str,
        "global": bool, "cubin_bytes": int}], "shape": list[int],
        "want_shape": list[int]}``: ``ok`` when every kernel lowered (and
        compiled), its CUDA source defines an ``extern "C" __global__``
        function, at least one kernel was called, and the output shape is the
        reference's; ``error`` says which of these failed.
    """
    import torch
    import tilelang
    from tilelang import tvm
    from tilelang.contrib import nvcc
    from tilelang.jit import JITImpl

    from kstrata.backends.pytorch import load_model_new
    from kstrata.tasks.loader import load_task

    task = load_task(Path(task_path))
    ref, inputs, init_inputs, _ = task.instantiate(shape, seed)
    meta = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs]
    with torch.no_grad():
        want = ref.to("meta")(*meta)
    target = {"kind": "cuda", "arch": arch}
    kernels: list[dict[str, Any]] = []

    def lowered(self: Any, *args: Any, **kwargs: Any) -> Any:
        func = self.get_tir(*args, **kwargs)
        with tvm.target.Target(target):
            text = tilelang.lower(func, target=target).kernel_source
            cubin = (nvcc.compile_cuda(text, target_format="cubin",
                                       options=nvcc.default_compile_options())
                     if compile_cubin else b"")
        kernels.append({"kernel": self.func.__name__ if hasattr(self.func, "__name__") else "?",
                        "args": repr(args), "global": 'extern "C" __global__' in text,
                        "cubin_bytes": len(cubin)})
        out_idx = self.out_idx if isinstance(self.out_idx, list) else [self.out_idx]
        bufs = [func.buffer_map[func.params[i]] for i in out_idx]

        def run(*tensors: Any) -> Any:
            dev = next((t.device for t in tensors if isinstance(t, torch.Tensor)), "cpu")
            outs = [torch.empty([int(d) for d in b.shape], dtype=getattr(torch, str(b.dtype)),
                                device=dev) for b in bufs]
            return outs[0] if len(outs) == 1 else outs
        return run

    out: dict[str, Any] = {"ok": False, "error": "", "kernels": kernels, "shape": [],
                           "want_shape": list(want.shape)}
    orig = JITImpl.__dict__["__call__"]
    JITImpl.__call__ = lowered
    try:
        torch.manual_seed(seed)
        model = load_model_new(source, init_inputs, "cpu", shape)
        with torch.no_grad():
            got = model(*meta)
    except Exception as e:  # noqa: BLE001 - a lowering or nvcc failure is the result
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    finally:
        JITImpl.__call__ = orig
    out["shape"] = list(got.shape)
    if not kernels:
        out["error"] = "no TileLang kernel was called"
    elif not all(k["global"] for k in kernels):
        out["error"] = "a kernel's CUDA source has no extern \"C\" __global__ function"
    elif compile_cubin and not all(k["cubin_bytes"] for k in kernels):
        out["error"] = "nvcc produced an empty cubin"
    elif out["shape"] != out["want_shape"]:
        out["error"] = f"output shape {out['shape']} != reference {out['want_shape']}"
    else:
        out["ok"] = True
    return out
