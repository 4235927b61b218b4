"""``pytorch-cuda`` backend: a PyTorch ``ModelNew`` candidate run on an NVIDIA GPU.

The candidate file is the same as for ``pytorch`` (KernelBench format:
``ModelNew`` with the task ``Model``'s constructor and ``forward``), but its
parameters, inputs and outputs live on ``cuda``: the judge runs the reference
on the GPU too (the float64 oracle stays on the host), the candidate process
gets the GPU device nodes, and timing uses the GPU path (L2 clear, a
device-wide synchronize inside each timed request, the judge's clock around
it). A fused op, a ``torch.compile``d module or a library's custom op can so
be checked where it will run.

It is a separate backend (not an option of ``pytorch``) so that the device a
result was measured on is part of every record that names the backend, and
``kstrata env`` says whether it can run here.
"""

from __future__ import annotations

import torch

from kstrata.backends.base import Availability, Backend
from kstrata.backends.pytorch import PyTorchBackend


def cuda_availability() -> Availability:
    """Whether PyTorch sees a CUDA device, with the reason when it does not.

    Returns
    -------
    Availability
        ``usable`` False with a reason that names the cause (a CPU-only
        build of torch, or no device/driver) and what to do; versions of
        torch and CUDA, and the device name when usable.
    """
    versions: tuple[tuple[str, str], ...] = (("torch", torch.__version__),)
    if not torch.version.cuda:
        return Availability(False, f"torch {torch.__version__} is a CPU-only build (no CUDA); install a "
                            "CUDA build of torch on a machine with an NVIDIA GPU, or use the pytorch "
                            "backend (CPU)", versions)
    versions += (("cuda", str(torch.version.cuda)),)
    if not torch.cuda.is_available():
        return Availability(False, "no CUDA device (torch.cuda.is_available() is False: no NVIDIA GPU "
                            "or driver here); use the pytorch backend (CPU)", versions)
    return Availability(True, "", versions + (("device", torch.cuda.get_device_name(0)),))


class PyTorchCudaBackend(PyTorchBackend):
    """Candidates written in PyTorch (``ModelNew``), run on the GPU (``cuda``)."""

    name = "pytorch-cuda"
    device = "cuda"

    def availability(self) -> Availability:
        return cuda_availability()


def device_line(backend: Backend) -> str:
    """Where ``backend``'s candidates run, for ``eval``, ``optimize`` and ``bench``.

    Parameters
    ----------
    backend:
        A registered backend (its ``device`` attribute: ``"cpu"`` or ``"cuda[:N]"``).

    Returns
    -------
    str
        e.g. ``"device: cuda:0: NVIDIA H200 (backend pytorch-cuda)"`` or
        ``"device: cpu: AMD EPYC 9R14 (backend pytorch)"``; a CUDA backend
        without a device reads ``"device: cuda (not available here)"``.
        Never raises.
    """
    from kstrata.measure.environment import device_name

    dev = getattr(backend, "device", "cpu") or "cpu"
    try:
        if dev.startswith("cuda") and not torch.cuda.is_available():
            where = f"{dev} (not available here)"
        else:
            where = device_name(dev if dev != "cuda" else "cuda:0")
    except Exception as e:  # noqa: BLE001 - a report line must not break the command
        where = f"{dev} ({type(e).__name__})"
    note = " (interpreter: correctness only)" if not getattr(backend, "timing_meaningful", True) else ""
    return f"device: {where} (backend {backend.name}){note}"
