"""Hardware specifications for prompts and roofline ceilings.

``hardware.toml`` beside this module holds datasheet figures per target with
the source of each. :func:`spec_for_backend` picks the entry for a backend
and device name, so prompts state the real machine, not a generic one.
"""

from __future__ import annotations

import os
import re
import tomllib
from functools import lru_cache
from pathlib import Path

_FILE = Path(__file__).with_name("hardware.toml")


@lru_cache(maxsize=1)
def hardware_specs() -> dict[str, dict]:
    """All entries of ``hardware.toml`` by key (e.g. ``"nvidia-h200"``)."""
    return tomllib.loads(_FILE.read_text())


def match_device(device_name: str) -> str | None:
    """Key of the entry whose name occurs in ``device_name`` (as torch reports it,
    e.g. ``"NVIDIA H200"`` → ``"nvidia-h200"``), or None."""
    low = device_name.lower().replace(" ", "-")
    best = None
    for key in hardware_specs():
        stem = key.split("-", 1)[1] if key.startswith(("nvidia-", "amd-")) else key
        if stem in low and (best is None or len(key) > len(best)):
            best = key
    return best


#: backends whose candidates run on an NVIDIA GPU: their prompts describe one even when none is visible
GPU_BACKENDS = ("tvm-cuda", "triton", "tilelang-cuda", "pytorch-cuda")


def _visible_gpu() -> str:
    """The name torch reports for CUDA device 0, ``""`` without one."""
    try:
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else ""
    except Exception:  # noqa: BLE001 - no CUDA runtime: no device to describe
        return ""


def gpu_target_spec(arch: str | None = None) -> dict:
    """The ``hardware.toml`` entry of kstrata's GPU target ``arch`` (default
    ``KSTRATA_CUDA_ARCH`` or ``sm_90``, as :func:`kstrata.backends.tvm.build.make_target`
    takes it): the first entry of that architecture, with a ``device`` line
    saying it is the architecture kstrata compiles for, not a GPU seen here.
    A prompt for a GPU backend built on a machine without a GPU (or with one
    no entry names) states this target and its limits instead of nothing
    (queue round rt58: "Target: tvm-cuda on the target device" and no line
    under it, on every GPU backend, since the prompt passed no device name).
    Only ``{"name", "arch", "device"}`` when no entry has that ``arch``."""
    arch = arch or os.environ.get("KSTRATA_CUDA_ARCH", "sm_90")
    note = (f"kstrata compiles GPU kernels for {arch} (KSTRATA_CUDA_ARCH); no GPU of it is visible to this "
            "process, so these are that architecture's datasheet figures")
    for key, spec in hardware_specs().items():
        if spec.get("kind") == "gpu" and f"({arch})" in str(spec.get("arch", "")):
            return {"name": key, **spec, "device": note}
    return {"name": f"an NVIDIA GPU of architecture {arch}", "arch": arch, "device": note}


def spec_for_backend(backend: str, device_name: str = "") -> dict | None:
    """The spec a prompt should show for ``backend`` running on ``device_name``.

    CPU backends fall back to the x86 AVX2/AVX-512 or Arm NEON entry by the
    flags of this machine (an AMD family 19h CPU with AVX-512, Zen 4, gets
    ``x86-avx512-zen4``: it runs AVX-512 as two 256-bit halves), or the entry named by ``KSTRATA_CPU_SPEC`` (e.g.
    ``x86-avx512``: a recorded cassette replays on a CPU of another kind);
    ``tvm-opencl`` runs on PoCL on this CPU: the CPU's entry with a line on
    how PoCL runs OpenCL there. GPU backends (:data:`GPU_BACKENDS`) use
    :func:`match_device` on ``device_name``, else on the GPU torch sees, else
    :func:`gpu_target_spec` (never ``None``).

    Raises
    ------
    ValueError
        If ``KSTRATA_CPU_SPEC`` names no known entry.
    """
    if not device_name and backend in GPU_BACKENDS:
        device_name = _visible_gpu()
        if not device_name or not match_device(device_name):
            return gpu_target_spec()
    if device_name:
        key = match_device(device_name)
        if key:
            return {"name": key, **hardware_specs()[key]}
    if backend == "tvm-opencl":  # PoCL on this CPU (TVMOpenCLBackend.device): the CPU's spec, run as OpenCL
        cpu = spec_for_backend("tvm-llvm") or {}
        pocl = hardware_specs()["pocl-cpu"]
        return {**cpu, "opencl": f"{pocl['arch']}: {pocl['notes']}"}
    if backend.endswith(("llvm", "-c")) or backend in ("pytorch", "triton-interp"):
        forced = os.environ.get("KSTRATA_CPU_SPEC")
        if forced:
            if forced not in hardware_specs():
                raise ValueError(f"KSTRATA_CPU_SPEC={forced!r} is not a known CPU spec; use one of "
                                 f"{', '.join(k for k in hardware_specs() if k.startswith(('x86', 'arm')))}")
            return {"name": forced, **hardware_specs()[forced]}
        flags = _cpuinfo()
        key = "x86-avx512" if " avx512f" in flags else "x86-avx2" if " avx2" in flags else "arm-neon"
        if key == "x86-avx512" and _zen4(flags):
            key = "x86-avx512-zen4"  # two 256-bit FMA pipes, not two 512-bit units (an AMD EPYC host)
        return {"name": key, **hardware_specs()[key]}
    return None


def _cpuinfo() -> str:
    """This machine's ``/proc/cpuinfo`` (``""`` where there is none)."""
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def _zen4(cpuinfo: str) -> bool:
    """Whether ``cpuinfo`` (``/proc/cpuinfo``) is an AMD family 19h CPU
    (Zen 3/Zen 4; of these only Zen 4 has AVX-512)."""
    vendor = re.search(r"^vendor_id\s*:\s*(\S+)", cpuinfo, re.MULTILINE)
    family = re.search(r"^cpu family\s*:\s*(\d+)", cpuinfo, re.MULTILINE)
    return bool(vendor and family and vendor.group(1) == "AuthenticAMD" and int(family.group(1)) == 0x19)


def gpu_target(arch: str | None = None, short: bool = False) -> str:
    """The GPU a kernel checked without a GPU (``triton-interp``) is meant
    for, in words with the datasheet figures of ``hardware.toml``: kstrata's
    GPU target ``arch`` (default ``KSTRATA_CUDA_ARCH`` or ``sm_90``, as the
    TVM CUDA target takes it), e.g. ``"an NVIDIA Hopper GPU (sm_90: H100/H200;
    132 SMs, 228 KiB shared memory per SM, 50 MiB L2, 3350-4800 GB/s memory
    bandwidth)"``; only the architecture when no entry has that ``arch``.
    A figure the entries disagree on is given as their range; ``short``:
    the architecture only (``"an NVIDIA Hopper GPU (sm_90)"``)."""
    arch = arch or os.environ.get("KSTRATA_CUDA_ARCH", "sm_90")
    specs = {k: v for k, v in hardware_specs().items()
             if v.get("kind") == "gpu" and f"({arch})" in str(v.get("arch", ""))}
    if not specs:
        return f"an NVIDIA GPU of architecture {arch}"  # no datasheet entry: no figures

    def span(field: str, unit: str) -> str | None:
        vals = sorted({v[field] for v in specs.values() if field in v})
        if not vals:
            return None
        return (f"{vals[0]:g}" if len(vals) == 1 else f"{vals[0]:g}-{vals[-1]:g}") + unit

    first = next(iter(specs.values()))
    family = str(first["arch"]).split(" (")[0]
    if short:
        return f"an {first['vendor']} {family} GPU ({arch})"
    names = "/".join(sorted(k.split("-", 1)[1].upper() for k in specs))
    figures = [f for f in (span("sms", " SMs"), span("smem_per_sm_kib", " KiB shared memory per SM"),
                           span("l2_mib", " MiB L2"), span("bandwidth_gbs", " GB/s memory bandwidth")) if f]
    return f"an {first['vendor']} {family} GPU ({arch}: {names}; {', '.join(figures)})"
