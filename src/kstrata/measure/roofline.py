"""The roofline model (Williams, Waterman & Patterson, CACM 2009) of this machine.

Two ceilings are measured once per device, dtype and library versions and
cached in ``<user cache dir>/kstrata/roofline.json`` (written atomically):

* bandwidth: a large tensor copy (``dst.copy_(src)``, 2 x size bytes moved,
  size >= 8 x LLC on CPU, 1 GiB on GPU), GB/s;
* compute: a large matmul (``2 n^3`` FLOPs) in the dtype, GFLOP/s.

Both are the best of several repetitions (a ceiling is the most the machine
showed it can do). From a task's FLOP and byte counts and a time,
:func:`analyze` gives the achieved rates, the arithmetic intensity, which
ceiling bounds the task (intensity below the ridge point ``peak_flops / bw``
is memory-bound) and the fraction of the attainable performance reached.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from kstrata import jsontext
from kstrata.atomic import write_atomic

import torch

from kstrata.measure import environment
from kstrata.measure.cache_flush import llc_bytes

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "float64": torch.float64, "int8": torch.int8}


def cache_dir() -> Path:
    """``$KSTRATA_CACHE_DIR`` or the platform user cache dir for kstrata."""
    env = os.environ.get("KSTRATA_CACHE_DIR")
    if env:
        return Path(env)
    try:
        import platformdirs

        return Path(platformdirs.user_cache_dir("kstrata"))
    except ImportError:
        return Path.home() / ".cache" / "kstrata"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`kstrata.atomic.write_atomic`)."""
    write_atomic(path, text)


@dataclass(frozen=True)
class Ceilings:
    """A device's measured peaks for one dtype.

    Attributes
    ----------
    bandwidth_gbs:
        Copy bandwidth, GB/s (1e9 bytes/s).
    gflops:
        Matmul throughput, GFLOP/s (1e9 FLOP/s).
    """

    device: str
    dtype: str
    bandwidth_gbs: float
    gflops: float
    method: str = "copy_ + matmul, best of repetitions"
    measured_at: str = ""
    threads: int = 0
    #: the rates :func:`measure_ceilings` measured, before any :func:`raise_to_observed`
    #: (0: unknown, an entry cached before they were kept)
    measured_bandwidth_gbs: float = 0.0
    measured_gflops: float = 0.0

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the two ceilings meet."""
        return self.gflops / self.bandwidth_gbs

    def to_dict(self) -> dict:
        return asdict(self)


def _best_seconds(fn: Callable[[], object], sync: Callable[[], None], reps: int) -> float:
    fn()
    sync()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def cpu_copy_bytes(llc: int | None, available: int | None = None) -> int:
    """Bytes of each of the two CPU copy buffers: 4x the last-level cache (STREAM's
    rule, each array at least 4x the caches: McCalpin, "STREAM: Sustainable Memory
    Bandwidth", www.cs.virginia.edu/stream/ref.html), at least 256 MiB, and at most
    1 GiB and an eighth of the memory available (``/proc/meminfo`` MemAvailable).

    The cap matters on VMs that report the host's whole L3 (480 MiB here): 8x that
    was two 3.75 GiB buffers per process, and parallel test workers were OOM-killed.
    A buffer partly cache-resident reads a higher bandwidth, so the roofline fraction
    of a candidate can only come out lower, never flattering it."""
    if available is None:
        try:
            with open("/proc/meminfo") as fh:
                kib = next(int(line.split()[1]) for line in fh if line.startswith("MemAvailable:"))
            available = kib * 1024
        except (OSError, StopIteration, ValueError):
            available = None
    want = max(256 << 20, 4 * (llc or 0))
    cap = 1 << 30 if available is None else min(1 << 30, max(64 << 20, available // 8))
    return min(want, cap)


def measure_ceilings(device: str = "cpu", dtype: str = "float32", reps: int = 5) -> Ceilings:
    """Measure the copy bandwidth and matmul throughput of ``device`` in ``dtype``.

    Takes about a second on a 2-core CPU. ``int8``: int8 copies, and the int8 product
    with int32 accumulation on CUDA (``torch._int_mm``); on a CPU, where PyTorch has
    no fast int8 product, the float32 product's rate. Raises ``KeyError`` for an
    unknown dtype (:data:`DTYPES`).
    """
    tdtype = DTYPES[dtype]
    cuda = device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    if not cuda:
        environment.fix_threads(None)
    copy_bytes = (1 << 30) if cuda else cpu_copy_bytes(llc_bytes())
    n_el = copy_bytes // torch.tensor([], dtype=tdtype).element_size()
    src = torch.ones(n_el, dtype=tdtype, device=device)
    dst = torch.empty_like(src)
    t_copy = _best_seconds(lambda: dst.copy_(src), sync, reps)
    del src, dst
    n = 8192 if cuda else 2048
    if not cuda and tdtype in (torch.float16, torch.bfloat16):
        n = 1024  # reduced-precision CPU matmul is slow; keep this under a second
    mm = torch.matmul
    if tdtype == torch.int8:  # int8 in, int32 accumulate (w8a8 tasks)
        a = torch.randint(-127, 128, (n, n), dtype=tdtype, device=device)
        b = torch.randint(-127, 128, (n, n), dtype=tdtype, device=device)
        if cuda:  # the int8 tensor-core product (cuBLASLt IMMA)
            mm = torch._int_mm
        else:  # CPU: PyTorch has no fast int8 product to measure; the float32 one's rate stands in
            a, b = a.float(), b.float()
    else:
        a = torch.randn(n, n, device=device).to(tdtype)
        b = torch.randn(n, n, device=device).to(tdtype)
    t_mm = _best_seconds(lambda: mm(a, b), sync, reps)
    bw, gf = 2 * copy_bytes / t_copy / 1e9, 2 * n**3 / t_mm / 1e9
    return Ceilings(
        device=environment.device_name(device),
        dtype=dtype,
        bandwidth_gbs=bw,
        gflops=gf,
        measured_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        threads=torch.get_num_threads(),
        measured_bandwidth_gbs=bw,
        measured_gflops=gf,
    )


#: A baseline may raise the measured ceilings by at most this factor
#: (:func:`raise_to_observed`). The raise exists for ceilings measured low under a
#: noisy neighbour (a few times low, never a thousand); a baseline "faster" than
#: this is a timing artefact: the candidate-process timer clamps a call timed
#: below its calibrated round trip to 1e-6 ms (:class:`kstrata.measure.remote.RemoteTimer`),
#: and an eager baseline whose median was that clamp once raised a 2-core CPU's
#: ceilings to 8.4e6 GB/s and 4.2e6 GFLOP/s (every later roofline fraction ~1e-8,
#: memory-bound ops called compute-bound: the ridge fell to 0.5 FLOP/B).
MAX_RAISE = 4.0


def _believable(c: Ceilings) -> bool:
    """Whether cached ceilings are within :data:`MAX_RAISE` of what was measured
    (an entry raised before the measured rates were kept is not: it is measured again)."""
    if "raised" not in c.method:
        return True
    return (0 < c.measured_bandwidth_gbs and 0 < c.measured_gflops
            and c.bandwidth_gbs <= MAX_RAISE * c.measured_bandwidth_gbs * (1 + 1e-9)
            and c.gflops <= MAX_RAISE * c.measured_gflops * (1 + 1e-9))


def _key(device: str, dtype: str) -> str:
    v = environment.versions()
    threads = torch.get_num_threads() if not device.startswith("cuda") else 0
    return f"{environment.device_name(device)}|{dtype}|threads={threads}|torch={v.get('torch')}"


def ceilings(device: str = "cpu", dtype: str = "float32", path: Path | None = None,
             refresh: bool = False) -> Ceilings:
    """The cached ceilings of ``device``/``dtype``, measured on first use.

    Parameters
    ----------
    path:
        The JSON cache (default ``cache_dir() / "roofline.json"``).
    refresh:
        Measure again even if cached.
    """
    path = Path(path) if path else cache_dir() / "roofline.json"
    key = _key(device, dtype)
    try:
        data = jsontext.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    cached = Ceilings(**data[key]) if key in data else None
    if not refresh and cached is not None and _believable(cached):
        c = cached
    else:
        c = measure_ceilings(device, dtype)
        _store(path, key, c)
    if not device.startswith("cuda") and dtype in ("float16", "bfloat16"):
        # a CPU kernel may widen fp16/bf16 to fp32 and use fp32 FMAs, which beat
        # torch's reduced-precision CPU matmul (a w4a16 GEMM ran at 1.6x the
        # measured fp16 rate): the compute ceiling is the better of the two
        c32 = ceilings(device, "float32", path, refresh=False)
        if c32.gflops > c.gflops:
            c = Ceilings(**{**asdict(c), "gflops": c32.gflops,
                            "method": c.method + "; compute: the float32 rate (widened arithmetic)"})
    return c


def _store(path: Path, key: str, c: Ceilings) -> None:
    """Write ``c`` under ``key`` into the JSON cache at ``path``, atomically; the
    file is re-read first, since another process may have added entries."""
    try:
        data = jsontext.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    data[key] = c.to_dict()
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True))


def raise_to_observed(c: Ceilings, device: str, flops: float | None, nbytes: float | None,
                      time_ms: float, path: Path | None = None) -> Ceilings:
    """Ceilings no lower than what a trusted baseline call just achieved.

    The ceilings are a best-of-5 copy and matmul measured once and cached; on
    a shared machine they can come out low (a noisy neighbour during the
    measurement), and then every good kernel reads as "faster than the
    roofline". When a baseline (eager PyTorch, ``torch.compile``, MetaSchedule:
    code kstrata trusts) does ``flops`` and moves ``nbytes`` in ``time_ms``,
    the device can reach those rates, so the peaks are raised to them and the
    cache updated (``method`` says so). Returns ``c`` itself when nothing was raised,
    also when the baseline's rate is over :data:`MAX_RAISE` times the measured
    ceilings (a timing artefact, not a faster machine).
    """
    if time_ms <= 0:
        return c
    gbs = nbytes / (time_ms * 1e-3) / 1e9 if nbytes else 0.0
    gf = flops / (time_ms * 1e-3) / 1e9 if flops else 0.0
    if gbs <= c.bandwidth_gbs and gf <= c.gflops:
        return c
    if gbs > MAX_RAISE * (c.measured_bandwidth_gbs or c.bandwidth_gbs) or \
            gf > MAX_RAISE * (c.measured_gflops or c.gflops):
        return c
    d = c.to_dict()
    d.update(bandwidth_gbs=max(c.bandwidth_gbs, gbs), gflops=max(c.gflops, gf),
             measured_bandwidth_gbs=c.measured_bandwidth_gbs or c.bandwidth_gbs,
             measured_gflops=c.measured_gflops or c.gflops,
             method=f"{c.method.split(';')[0]}; raised to a baseline's achieved rate "
                    f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')}")
    new = Ceilings(**d)
    _store(Path(path) if path else cache_dir() / "roofline.json", _key(device, c.dtype), new)
    return new


@dataclass(frozen=True)
class RooflinePoint:
    """Where one timed call sits on the roofline.

    Attributes
    ----------
    time_ms:
        The time analysed.
    achieved_gbs, achieved_gflops:
        ``bytes / time`` and ``flops / time`` (None when the count is unknown).
    intensity:
        FLOP per minimum byte (None when either count is unknown).
    bound:
        ``"memory"``, ``"compute"`` or ``"unknown"``.
    fraction:
        Achieved / attainable performance at this intensity, in [0, ~1]
        (> 1 means faster than the machine allows: suspicious).
    floor_ms:
        The least time the counts allow: ``max(bytes / BW, flops / peak)``.
    """

    time_ms: float
    achieved_gbs: float | None
    achieved_gflops: float | None
    intensity: float | None
    ridge: float
    bound: str
    fraction: float | None
    floor_ms: float | None

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        if self.fraction is None:
            return "roofline: no FLOP or byte count for this task"
        parts = [f"{self.bound}-bound at {100 * self.fraction:.0f}% of the roofline"]
        if self.achieved_gbs is not None:
            parts.append(f"{self.achieved_gbs:.1f} GB/s")
        if self.achieved_gflops is not None:
            parts.append(f"{self.achieved_gflops:.1f} GFLOP/s")
        if self.intensity is not None:
            parts.append(f"intensity {self.intensity:.2f} FLOP/B (ridge {self.ridge:.1f})")
        return ", ".join(parts)


#: The ceilings are the best rates torch's own kernels showed (``copy_``, matmul),
#: not the hardware's peak: a read-only stream moves more bytes per second than a
#: copy (no write-allocate traffic) and a hand-blocked kernel may beat the
#: library's matmul. A time counts as impossible only below the roofline time
#: divided by this margin; the shortcuts it exists to catch (a cached result,
#: skipped work, work left running) are 10-1000x under the floor, not 1.5x.
IMPOSSIBLE_MARGIN = 1.5


def floor_ms(flops: float | None, nbytes: float | None, c: Ceilings,
             margin: float = IMPOSSIBLE_MARGIN) -> float | None:
    """Least believable time (ms) of a call moving ``nbytes`` and doing ``flops``:
    the roofline time at the ceilings ``c``, divided by ``margin``
    (:data:`IMPOSSIBLE_MARGIN`; pass 1 for the plain roofline time)."""
    times = []
    if nbytes:
        times.append(nbytes / (c.bandwidth_gbs * 1e9) * 1e3)
    if flops:
        times.append(flops / (c.gflops * 1e9) * 1e3)
    return max(times) / margin if times else None


def analyze(time_ms: float, flops: float | None, nbytes: float | None, c: Ceilings) -> RooflinePoint:
    """Place a call of ``time_ms`` with the given counts on ``c``'s roofline.

    With both counts, attainable = ``min(peak, intensity x BW)`` and the bound is
    memory when the intensity is below the ridge. With only bytes the task is
    taken as memory-bound (fraction = achieved BW / peak BW); with only FLOPs,
    compute-bound.

    Raises
    ------
    ValueError
        If ``time_ms <= 0``.
    """
    if time_ms <= 0:
        raise ValueError(f"time_ms must be > 0, got {time_ms}")
    s = time_ms / 1e3
    gbs = nbytes / s / 1e9 if nbytes else None
    gfl = flops / s / 1e9 if flops else None
    intensity = flops / nbytes if flops and nbytes else None
    if intensity is not None:
        attainable = min(c.gflops, intensity * c.bandwidth_gbs)
        bound = "memory" if intensity < c.ridge else "compute"
        fraction = gfl / attainable  # type: ignore[operator]
    elif gbs is not None:
        bound, fraction = "memory", gbs / c.bandwidth_gbs
    elif gfl is not None:
        bound, fraction = "compute", gfl / c.gflops
    else:
        bound, fraction = "unknown", None
    return RooflinePoint(time_ms, gbs, gfl, intensity, c.ridge, bound, fraction,
                         floor_ms(flops, nbytes, c, margin=1.0))
