"""Evicting caches between timed calls, so that no call is timed with a warm cache.

CPU: write to a buffer larger than the last-level cache (its size read from
``/sys/devices/system/cpu/cpu0/cache``). GPU: zero a 256 MiB buffer, as
``triton.testing.do_bench`` does (larger than any current L2: H100 50 MiB,
H200 50 MiB, B200 126 MiB).
"""

from __future__ import annotations

from pathlib import Path

import torch

#: Size of the GPU L2 clear, bytes (triton.testing.do_bench uses 256 MB).
GPU_FLUSH_BYTES = 256 * 1024 * 1024
#: Fallback when sysfs gives no cache sizes: 64 MiB covers most server LLCs slices.
DEFAULT_LLC_BYTES = 64 * 1024 * 1024
SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")


def _parse_size(text: str) -> int:
    """``"32768K"`` -> 33554432; accepts K, M, G suffixes or plain bytes."""
    text = text.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    digits = text[:-1] if text[-1:] in "KMG" else text
    return int(digits) * mult


def llc_bytes(cache_dir: Path = SYSFS_CACHE) -> int | None:
    """Size in bytes of the highest-level data/unified cache that cpu0 sees.

    Reads ``index*/level``, ``index*/type`` and ``index*/size`` under
    ``cache_dir`` (Linux sysfs). Returns None when none is readable.
    """
    best: tuple[int, int] | None = None
    for index in sorted(Path(cache_dir).glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip() if (index / "type").exists() else "Unified"
            size = _parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        if best is None or level > best[0] or (level == best[0] and size > best[1]):
            best = (level, size)
    return best[1] if best else None


class CacheFlusher:
    """Writes a buffer of ``nbytes`` to evict caches; counts how often it ran.

    Parameters
    ----------
    nbytes:
        Buffer size; default twice the LLC (or :data:`DEFAULT_LLC_BYTES`) on
        CPU, :data:`GPU_FLUSH_BYTES` on CUDA.
    device:
        ``"cpu"`` or ``"cuda"``/``"cuda:N"``.
    enabled:
        When False, :meth:`flush` only counts (timing without a flush is then
        recorded as such).

    Attributes
    ----------
    calls:
        Number of :meth:`flush` calls that wrote the buffer.
    """

    def __init__(self, nbytes: int | None = None, device: str = "cpu", enabled: bool = True):
        self.device = device
        self.enabled = enabled
        if nbytes is None:
            if device.startswith("cuda"):
                nbytes = GPU_FLUSH_BYTES
            else:
                nbytes = 2 * (llc_bytes() or DEFAULT_LLC_BYTES)
        self.nbytes = int(nbytes)
        self.calls = 0
        self._buf = torch.empty(self.nbytes // 4, dtype=torch.int32, device=device) if enabled else None
        self._value = 0

    def flush(self) -> None:
        """Overwrite the whole buffer (a store to every cache line).

        On CUDA the write is enqueued on the current stream before the timed
        call's start event, as in ``triton.testing.do_bench``.
        """
        if self._buf is None:
            return
        self._value = (self._value + 1) & 0x7FFFFFFF  # a changing value defeats store elision
        self._buf.fill_(self._value)
        self.calls += 1

    def describe(self) -> dict:
        """What was done, for :class:`kstrata.measure.timing.Measurement`."""
        return {"enabled": self.enabled, "bytes": self.nbytes if self.enabled else 0,
                "device": self.device}
