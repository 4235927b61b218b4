"""Metrics turned into a few findings in plain words, each tagged with the level
(graph, schedule or source) most likely to fix it.

Rules (thresholds are rules of thumb from the Nsight Compute "Guided Analysis"
rules and the roofline paper, Williams et al. 2009):

* below 60% of the roofline, memory-bound -> schedule (coalescing, vectorizing,
  parallelizing the loops that stream memory);
* more than 1.5x the minimum DRAM bytes -> graph (inputs read more than once:
  fuse the passes), measured by ``ncu`` DRAM bytes or ``perf`` LLC misses x 64 B;
* below 50% of peak, compute-bound -> schedule (tiling, vector/tensor units);
* at >= 80% of the roofline -> graph (only a different algorithm or fusion helps);
* above the roofline -> source (the result is suspicious);
* ``ncu``: achieved occupancy < 25% -> schedule; > 8 sectors per global load
  request (4 is ideal for 32-bit, fully coalesced) -> source; local-memory
  traffic (register spills) -> schedule; tensor pipes idle on a compute-bound
  half-precision task -> source.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the agents read CEILING without importing torch
    from kstrata.measure.roofline import Ceilings, RooflinePoint

LEVELS = ("graph", "schedule", "source")
CACHE_LINE = 64


@dataclass(frozen=True)
class Finding:
    """One statement for an agent.

    Attributes
    ----------
    text:
        Plain words, with the numbers that support them.
    level:
        ``"graph"``, ``"schedule"`` or ``"source"``: where a fix most likely lies.
    confidence:
        In [0, 1]; how sure the rule is (used to rank findings).
    metrics:
        The numbers the rule used.
    """

    text: str
    level: str
    confidence: float
    metrics: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {self.level!r}")
        if not 0 <= self.confidence <= 1:
            raise ValueError(f"confidence must be in [0, 1], got {self.confidence}")

    def to_dict(self) -> dict:
        return asdict(self)


#: the words of the finding at >= 80% of the roofline ("only less work helps"), which a
#: faster measured baseline contradicts (the agents leave it out then: :func:`ceiling_finding`)
CEILING = "of the roofline: little is left"


def ceiling_finding(text: str) -> bool:
    """Whether a finding's ``text`` is the at-the-ceiling one (:data:`CEILING`)."""
    return CEILING in text


#: prefixes of measurement findings that say a timing is not to be believed
#: (:data:`kstrata.search.tree.UNTRUSTED_PREFIX`, :data:`kstrata.measure.overhead.PREFIX`)
DISTRUST_PREFIXES = ("untrusted timing:", "overhead-dominated:")

#: how :func:`from_roofline`'s findings begin (their numbers come from the median time alone)
_ROOFLINE_HEAD = re.compile(r"(memory-bound at \d+% of peak bandwidth \(|compute-bound at \d+% of peak FLOP/s"
                            r"|faster than the roofline allows)")


def roofline_finding(text: str) -> bool:
    """Whether a finding's ``text`` is one of :func:`from_roofline`'s, derived
    from the median time alone: a timing that is not believed (contended,
    overhead-dominated) makes it say nothing about the kernel, so the agents
    neither show nor route it then. Counter-based findings (``ncu``, ``perf``)
    are not: they do not depend on the time."""
    return bool(_ROOFLINE_HEAD.match(text)) or ceiling_finding(text)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _traffic(measured_bytes: float, min_bytes: float, head: str, source: str) -> Finding | None:
    ratio = measured_bytes / min_bytes
    if ratio <= 1.5:
        return None
    return Finding(
        f"{head}{ratio:.1f}x more DRAM bytes than the minimum ({source}): inputs are read "
        "more than once — consider fusing the passes so each input is read once",
        "graph", 0.7, {"dram_bytes": measured_bytes, "min_bytes": min_bytes, "ratio": ratio})


#: A roofline fraction above which a timing is called out: faster than the ceilings
#: PyTorch's own copy and matmul reached here (``kstrata eval`` says so too). A time
#: is called impossible only under ``roofline.IMPOSSIBLE_MARGIN`` (1.5x above them);
#: a GEMM that recomputed only what the timer changed read 131% (red-team 2026-12-04).
ABOVE_ROOFLINE = 1.05


def from_roofline(p: RooflinePoint, c: Ceilings) -> list[Finding]:
    """Findings from the roofline position alone (always available)."""
    if p.fraction is None:
        return []
    m = {"fraction": p.fraction, "bound": p.bound, "achieved_gbs": p.achieved_gbs,
         "achieved_gflops": p.achieved_gflops, "intensity": p.intensity}
    if p.fraction > ABOVE_ROOFLINE:
        return [Finding(f"faster than the roofline allows ({_pct(p.fraction)} of the ceiling): "
                        "the timing is suspicious — cached output, skipped work, or work left "
                        "running after the call returned", "source", 0.9, m)]
    if p.fraction >= 0.8:
        return [Finding(f"{p.bound}-bound at {_pct(p.fraction)} {CEILING} "
                        "at the schedule or source level; only less work (a different algorithm, "
                        "fusing with neighbours, lower precision where allowed) helps",
                        "graph", 0.4, m)]
    if p.bound == "memory" and p.fraction < 0.6:
        bw = (p.achieved_gbs or 0) / c.bandwidth_gbs
        return [Finding(f"memory-bound at {_pct(bw)} of peak bandwidth ({p.achieved_gbs:.1f} of "
                        f"{c.bandwidth_gbs:.0f} GB/s): stream memory with contiguous, vectorized "
                        "accesses and enough parallel work", "schedule",
                        0.6 if p.fraction < 0.3 else 0.4, m)]
    if p.bound == "compute" and p.fraction < 0.5:
        return [Finding(f"compute-bound at {_pct(p.fraction)} of peak FLOP/s "
                        f"({p.achieved_gflops:.1f} of {c.gflops:.0f} GFLOP/s): tile for "
                        "registers and cache, and use the vector/tensor units", "schedule",
                        0.6 if p.fraction < 0.25 else 0.4, m)]
    return []


def from_ncu(metrics: dict[str, float], min_bytes: float | None, p: RooflinePoint | None,
             dtype: str = "float32") -> list[Finding]:
    """Findings from aggregated ``ncu`` metrics (see :func:`ncu.aggregate`)."""
    out: list[Finding] = []
    head = ""
    if p is not None and p.bound == "memory" and p.achieved_gbs is not None:
        dram_pct = metrics.get("dram__throughput.avg.pct_of_peak_sustained_elapsed")
        if dram_pct is not None:
            head = f"memory-bound at {dram_pct:.0f}% of peak bandwidth; "
    dram = metrics.get("dram__bytes_read.sum", 0.0) + metrics.get("dram__bytes_write.sum", 0.0)
    if min_bytes and dram:
        f = _traffic(dram, min_bytes, head, "ncu dram__bytes")
        if f:
            out.append(f)
    occ = metrics.get("sm__warps_active.avg.pct_of_peak_sustained_active")
    if occ is not None and occ < 25:
        regs = metrics.get("launch__registers_per_thread")
        out.append(Finding(
            f"achieved occupancy {occ:.0f}%" + (f" ({regs:.0f} registers/thread)" if regs else "")
            + ": too few warps to hide memory latency — launch more blocks, or use fewer "
            "registers/shared memory per block", "schedule", 0.5,
            {"occupancy_pct": occ, "registers_per_thread": regs}))
    sectors = metrics.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    requests = metrics.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    if sectors and requests and sectors / requests > 8:
        spr = sectors / requests
        out.append(Finding(
            f"uncoalesced global loads: {spr:.1f} sectors per request (4 is ideal for 32-bit "
            "loads): neighbouring threads should read neighbouring addresses", "source", 0.5,
            {"sectors_per_request": spr}))
    local = metrics.get("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum")
    if local:
        out.append(Finding(
            f"register spills: {local / 1024:.0f} KiB of local-memory loads per call — use "
            "smaller tiles or fewer live values per thread", "schedule", 0.5,
            {"local_load_bytes": local}))
    tensor = metrics.get("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
    if (tensor is not None and tensor < 10 and p is not None and p.bound == "compute"
            and dtype in ("float16", "bfloat16")):
        out.append(Finding(
            f"tensor cores idle ({tensor:.0f}% active) on a compute-bound {dtype} task: "
            "use MMA instructions (tl.dot / T.gemm / wmma)", "source", 0.6,
            {"tensor_active_pct": tensor}))
    return out


def from_perf(per_call: dict[str, float], min_bytes: float | None,
              p: RooflinePoint | None) -> list[Finding]:
    """Findings from ``perf stat`` counts per call (see :func:`perf.count`)."""
    out: list[Finding] = []
    misses = per_call.get("LLC-load-misses") or per_call.get("cache-misses")
    if misses and min_bytes:
        f = _traffic(misses * CACHE_LINE, min_bytes, "", "perf LLC misses x 64 B")
        if f:
            out.append(f)
    ins, cyc = per_call.get("instructions"), per_call.get("cycles")
    if ins and cyc and ins / cyc < 0.5:
        out.append(Finding(f"IPC {ins / cyc:.2f}: the core is mostly stalled (usually on memory) — "
                           "block the loops for cache and prefetch-friendly order", "schedule",
                           0.4, {"ipc": ins / cyc}))
    return out


def findings(point: RooflinePoint | None, ceilings: Ceilings | None, *,
             min_bytes: float | None = None, ncu: dict[str, float] | None = None,
             perf: dict[str, float] | None = None, dtype: str = "float32",
             limit: int = 4) -> list[Finding]:
    """The ``limit`` most confident findings from every source available.

    Profiler findings come first at equal confidence; the roofline finding
    about bandwidth is dropped when an ``ncu`` traffic finding already says it.
    """
    out: list[Finding] = []
    if ncu:
        out += from_ncu(ncu, min_bytes, point, dtype)
    if perf:
        out += from_perf(perf, min_bytes, point)
    if point is not None and ceilings is not None:
        roof = from_roofline(point, ceilings)
        if not any(f.text.startswith("memory-bound at") for f in out):
            out += roof
        else:
            out += [f for f in roof if not f.text.startswith("memory-bound at")]
    out.sort(key=lambda f: -f.confidence)
    return out[:limit]
