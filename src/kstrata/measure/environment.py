"""The clock-sensitive settings and versions recorded with every measurement."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import torch

from kstrata.execute.cpus import allowed_cpu_count, allowed_cpus

LIBRARIES = ("torch", "numpy", "apache-tvm", "triton", "tilelang", "kstrata")
THREAD_ENV = ("OMP_NUM_THREADS", "TVM_NUM_THREADS", "MKL_NUM_THREADS")
#: Thread-pool waiting settings recorded with each measurement (see kstrata.execute.pool.worker_env).
WAIT_ENV = ("OMP_WAIT_POLICY", "TVM_THREAD_POOL_SPIN_COUNT")


def versions() -> dict[str, str]:
    """Installed versions of Python and the libraries that change timings."""
    out = {"python": sys.version.split()[0]}
    for lib in LIBRARIES:
        try:
            out[lib] = version(lib)
        except PackageNotFoundError:
            continue
    if torch.version.cuda:
        out["cuda"] = torch.version.cuda
    return out


def cpu_name() -> str:
    """The CPU model from ``/proc/cpuinfo`` (or :func:`platform.processor`)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_name(device: str) -> str:
    """A human-readable device: ``"cpu: AMD EPYC"`` or ``"cuda:0: NVIDIA H200"``."""
    if device.startswith("cuda"):
        idx = torch.device(device).index or 0
        return f"cuda:{idx}: {torch.cuda.get_device_name(idx)}"
    return f"cpu: {cpu_name()}"


def cpu_governor() -> str | None:
    """cpu0's cpufreq scaling governor, or None where not exposed (VMs)."""
    try:
        return Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").read_text().strip()
    except OSError:
        return None


def gpu_clocks(index: int = 0) -> dict[str, str] | None:
    """Current and maximum SM/memory clocks from ``nvidia-smi`` (None if absent)."""
    if not shutil.which("nvidia-smi"):
        return None
    fields = "clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,persistence_mode,power.limit"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--id={index}", f"--query-gpu={fields}", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return dict(zip(fields.split(","), (v.strip() for v in out.split(","))))


def fix_threads(n: int | None) -> int:
    """Fix the intra-op thread count of torch, OpenMP and TVM to ``n``.

    ``n=None`` uses the CPUs this process may run on. The environment
    variables reach TVM's and OpenMP's pools only if set before they start, so
    call this first thing in a worker.

    Returns
    -------
    int
        The thread count now in effect for torch.
    """
    if n is None:
        n = allowed_cpu_count()
    for var in THREAD_ENV:
        os.environ[var] = str(n)
    torch.set_num_threads(n)
    return torch.get_num_threads()


def settings(device: str) -> dict:
    """Clock-sensitive settings now in effect on ``device``."""
    out: dict = {
        "threads": torch.get_num_threads(),
        "thread_env": {v: os.environ.get(v) for v in THREAD_ENV + WAIT_ENV},
        "cpu_governor": cpu_governor(),
        "cpus_allowed": len(allowed) if (allowed := allowed_cpus()) is not None else None,
        "cpu": cpu_name(),
    }
    if device.startswith("cuda"):
        out["gpu_clocks"] = gpu_clocks(torch.device(device).index or 0)
    return out
