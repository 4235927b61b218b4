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
