"""Nsight Compute (``ncu``) adapter: build the command line and parse its CSV.

A command from :func:`ncu_command` profiles only kernels inside the NVTX range
``kstrata_profile`` (``--nvtx --nvtx-include``), so compilation, autotuning
and warm-up are never profiled. Nothing here runs a candidate: candidates run
only in their sandboxed process, which ``ncu`` cannot reach (:func:`profile`).

CSV formats (Nsight Compute CLI docs, "Command Line Options" / "--csv",
"--page"): with ``--page raw`` one row per kernel launch, metric names as
column headers and a second row of units; with ``--page details`` one row per
(kernel, metric) with ``Metric Name``, ``Metric Unit``, ``Metric Value``
columns. Both are parsed; numbers may carry thousands separators.
"""

from __future__ import annotations

import csv
import io
import shutil
from dataclasses import dataclass, field
from pathlib import Path

NVTX_RANGE = "kstrata_profile"

#: Metrics collected by default (names as in ``ncu --query-metrics``).
METRICS = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__registers_per_thread",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
)

_ID_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
               "Stream", "Block Size", "Grid Size", "Device", "CC")


@dataclass
class KernelMetrics:
    """Metrics of one profiled kernel launch."""

    id: int
    name: str
    metrics: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)


def ncu_command(argv: list[str], metrics: tuple[str, ...] = METRICS, ncu: str = "ncu",
                nvtx_range: str | None = NVTX_RANGE, kernel_regex: str | None = None,
                launch_count: int | None = None) -> list[str]:
    """The ``ncu`` command line that profiles ``argv`` and prints raw CSV.

    Parameters
    ----------
    argv:
        The program to profile (e.g. ``[sys.executable, "-m", ...]``).
    nvtx_range:
        Profile only kernels inside this NVTX push/pop range (None: all).
    kernel_regex, launch_count:
        Optional ``--kernel-name regex:...`` and ``--launch-count`` filters.
    """
    # --clock-control none: profile at the clocks the timer sees (ncu's default
    # locks them to base, which changes memory-bound kernels' numbers)
    cmd = [ncu, "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
           "--target-processes", "all", "--metrics", ",".join(metrics)]
    if nvtx_range:
        cmd += ["--nvtx", "--nvtx-include", f"{nvtx_range}/"]
    if kernel_regex:
        cmd += ["--kernel-name", f"regex:{kernel_regex}"]
    if launch_count:
        cmd += ["--launch-count", str(launch_count)]
    return cmd + ["--", *argv]


def _number(text: str) -> float | None:
    t = text.strip().replace(",", "")
    if t in ("", "n/a", "N/A"):
        return None
    try:
        return float(t)
    except ValueError:
        return None


def parse_csv(text: str) -> list[KernelMetrics]:
    """Parse ``ncu --csv`` output (``--page raw`` or ``--page details``).

    Lines before the CSV header (``==PROF==`` messages, the program's own
    output) are skipped. Non-numeric metric values are dropped.

    Raises
    ------
    ValueError
        If no CSV header with an ``ID`` and ``Kernel Name`` column is found.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith('"ID"') and '"Kernel Name"' in line), None)
    if start is None:
        raise ValueError("no ncu CSV header found (expected a line starting with \"ID\")")
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    kernels: dict[int, KernelMetrics] = {}
    if "Metric Name" in header:  # --page details: one row per metric
        col = {name: i for i, name in enumerate(header)}
        for row in rows[1:]:
            if len(row) != len(header):
                continue
            kid = int(row[col["ID"]])
            k = kernels.setdefault(kid, KernelMetrics(kid, row[col["Kernel Name"]]))
            value = _number(row[col["Metric Value"]])
            if value is not None:
                k.metrics[row[col["Metric Name"]]] = value
                k.units[row[col["Metric Name"]]] = row[col["Metric Unit"]]
        return list(kernels.values())
    units: list[str] = []
    body = rows[1:]
    if body and not body[0][0].strip().isdigit():  # the units row
        units, body = body[0], body[1:]
    for row in body:
        if len(row) != len(header) or not row[0].strip().isdigit():
            continue
        k = KernelMetrics(int(row[0]), row[header.index("Kernel Name")])
        for i, name in enumerate(header):
            if name in _ID_COLUMNS:
                continue
            value = _number(row[i])
            if value is not None:
                k.metrics[name] = value
                k.units[name] = units[i] if i < len(units) else ""
        kernels[k.id] = k
    return list(kernels.values())


def aggregate(kernels: list[KernelMetrics], calls: int = 1,
              names: tuple[str, ...] | None = METRICS) -> dict[str, float]:
    """Per-call totals over all kernels: ``.sum`` metrics summed (then divided
    by ``calls``), percentages and per-launch values averaged weighted by
    ``gpu__time_duration.sum``. Adds ``kernels_per_call``.

    ``names`` restricts the result to those metrics (``ncu --page raw`` also
    prints device attributes and NVTX columns); None keeps every metric.
    """
    out: dict[str, float] = {}
    weights = [k.metrics.get("gpu__time_duration.sum", 1.0) for k in kernels]
    total_w = sum(weights) or 1.0
    present = {n for k in kernels for n in k.metrics}
    for name in sorted(present if names is None else present & set(names)):
        vals = [(k.metrics[name], w) for k, w in zip(kernels, weights) if name in k.metrics]
        if name.endswith(".sum"):
            out[name] = sum(v for v, _ in vals) / calls
        else:
            out[name] = sum(v * w for v, w in vals) / sum(w for _, w in vals) if total_w else 0.0
    out["kernels_per_call"] = len(kernels) / calls
    return out


@dataclass
class NcuResult:
    """Outcome of one profile: per-call metrics, or why there are none."""

    ok: bool
    reason: str = ""
    metrics: dict[str, float] = field(default_factory=dict)
    kernels: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)


def profile(backend: str, task: str, sources: dict[str, str], shape: dict[str, int],
            work_dir: Path, calls: int = 3, timeout_s: float = 600.0,
            ncu: str = "ncu") -> NcuResult:
    """Profile a candidate under ``ncu``: not available; the reason comes back
    as ``ok=False`` (errors are data).

    A candidate runs only in its sandboxed candidate process
    (:mod:`kstrata.sandbox`), and ``ncu`` cannot reach a kernel there: it
    injects its collector through environment variables and talks to it
    through the file system and the network, which the sandbox clears,
    makes private and cuts. The former implementation built and ran the
    candidate in a plain process outside the sandbox (red-team round 4) and
    was removed; the parsers above stay for captured CSV. The parameters are
    kept for callers written against it.
    """
    if shutil.which(ncu) is None:
        return NcuResult(False, f"{ncu} not found on PATH")
    return NcuResult(False, "ncu cannot profile a candidate: candidates run only in their sandboxed process, "
                     "which ncu's collector cannot reach; use the roofline findings")
