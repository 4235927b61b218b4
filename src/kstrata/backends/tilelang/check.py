"""Worker-side helpers for the TileLang backends (run inside the TileLang env).

:func:`check_candidate` is a small correctness probe (load, run, compare with
the task reference at one shape) used by tests and ``kstrata import``; the
verdicts that count come from :mod:`kstrata.verify`.
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
