"""Hardware specifications for prompts and roofline ceilings.

``hardware.toml`` beside this module holds datasheet figures per target with
the source of each. :func:`spec_for_backend` picks the entry for a backend
and device name, so prompts state the real machine, not a generic one.
"""

from __future__ import annotations

import os
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


def spec_for_backend(backend: str, device_name: str = "") -> dict | None:
    """The spec a prompt should show for ``backend`` running on ``device_name``.

    CPU backends fall back to the x86 AVX2/AVX-512 or Arm NEON entry by the
    flags of this machine, or the entry named by ``KSTRATA_CPU_SPEC`` (e.g.
    ``x86-avx512``: a recorded cassette replays on a CPU of another kind);
    GPU backends use :func:`match_device`.

    Raises
    ------
    ValueError
        If ``KSTRATA_CPU_SPEC`` names no known entry.
    """
    if device_name:
        key = match_device(device_name)
        if key:
            return {"name": key, **hardware_specs()[key]}
    if backend.endswith(("llvm", "-c")) or backend in ("pytorch", "triton-interp"):
        forced = os.environ.get("KSTRATA_CPU_SPEC")
        if forced:
            if forced not in hardware_specs():
                raise ValueError(f"KSTRATA_CPU_SPEC={forced!r} is not a known CPU spec; use one of "
                                 f"{', '.join(k for k in hardware_specs() if k.startswith(('x86', 'arm')))}")
            return {"name": forced, **hardware_specs()[forced]}
        flags = ""
        try:
            flags = Path("/proc/cpuinfo").read_text()
        except OSError:
            pass
        key = "x86-avx512" if " avx512f" in flags else "x86-avx2" if " avx2" in flags else "arm-neon"
        return {"name": key, **hardware_specs()[key]}
    return None
