"""The verify and sandbox red-team cases, and their GPU forms, on the GPU (issue 22).

Every row is one ``kstrata eval`` (``--json``) of a case's candidate, through
``pytorch-cuda`` or ``triton`` on the GPU, and through the CPU counterpart
(``pytorch``, ``triton-interp``) for the CPU column. Cases come from
``tests/verify/cases`` and ``tests/sandbox/cases`` (copies of
``../shared/cases/{verify,sandbox}``); the GPU forms of the timing hacks (side
stream, patched synchronize/event/clock, work left queued after return, TF32
and bfloat16 through aliases) are the files in ``tests/verify/cases_gpu``.

Usage (repository root)::

    python benchmarks/gpu_verify_cases.py --device cpu --json-out CPU.json     # here: the CPU column
    python benchmarks/gpu_verify_cases.py --device gpu --cpu-column CPU.json \\
        --out benchmarks/results/verify_cases_gpu.txt                          # on the GPU machine

``--unsafe-no-sandbox`` is passed to kstrata where bubblewrap cannot create
namespaces (the judge/candidate process split still holds); the header says
which. ``--only ID,...`` runs some rows.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERIFY = ROOT / "tests" / "verify" / "cases"
SANDBOX = ROOT / "tests" / "sandbox" / "cases"
GPU = ROOT / "tests" / "verify" / "cases_gpu"
#: GPU backend -> its CPU counterpart (None: the row has no CPU form)
CPU_OF = {"pytorch-cuda": "pytorch", "triton": "triton-interp"}


@dataclass
class Row:
    """One case through one backend: where, what, and how to read the answer."""

    id: str
    folder: Path
    task: str
    cand: str
    backend: str               # the GPU backend
    args: tuple[str, ...]
    expected: str
    ok: Callable[[dict], bool]
    cpu: bool = True           # whether a CPU form exists
    env: tuple[tuple[str, str], ...] = ()  # extra environment of the kstrata eval


def _t(d: dict) -> dict:
    return d.get("timing") or {}


def _speedup(d: dict) -> float | None:
    return _t(d).get("speedup")


def plain_speedup(d: dict, above: float = 1.0) -> bool:
    """Correct, timed faster than ``above`` and nothing flags the timing."""
    t = _t(d)
    flagged = bool(t.get("suspicious")) or "weak_match" in (d.get("evidence") or {}) or bool(d.get("warnings"))
    return d.get("verdict") == "correct" and (t.get("speedup") or 0) > above and not flagged


def verdict_in(*kinds: str) -> Callable[[dict], bool]:
    return lambda d: d.get("verdict") in kinds


def correct_no_gain(limit: float) -> Callable[[dict], bool]:
    """Correct (or rejected), and no trusted speedup above ``limit``."""
    return lambda d: d.get("verdict") == "rejected" or (
        d.get("verdict") == "correct" and not plain_speedup(d, limit))


def _overhead_marked(d: dict) -> bool:
    t = _t(d)
    return d.get("verdict") == "correct" and (
        "overhead" in " ".join(map(str, t.get("suspicious") or [])).lower() or t.get("speedup") is None)


def _tie(d: dict) -> bool:
    ci = _t(d).get("speedup_ci")
    return d.get("verdict") == "correct" and ci is not None and ci[0] <= 1.0 <= ci[1]


def _probe_contained(d: dict) -> bool:
    """Case 02's reporting probe (``PROBE{json}ENDPROBE`` in the load error): no
    key in any environment it can read, no connection out (before or after
    ``setns``), nothing written into the repository."""
    import re

    m = re.search(r"PROBE(\{.*\})ENDPROBE", str((d.get("evidence") or {}).get("message", "")), re.S)
    if not m:
        return False
    r = json.loads(m.group(1))

    def failed(v: object) -> bool:
        return v != 0 if not isinstance(v, (list, tuple)) else (not v or v[0] != 0)

    return (r.get("key_in_own_env") is False and r.get("parent_environ_has_key") is not True
            and (r.get("key_in_any_environ") in ([],) or str(r.get("key_in_any_environ")).startswith("ERR"))
            and all(failed(r.get(k, "ERR")) for k in ("connect_netns", "connect_after_setns"))
            and r.get("wrote_src") is not True)


def _prepared(row: Row, tmp: Path) -> Path:
    """The row's candidate with the placeholders a probe case carries filled in
    (``<checkout>``: this repository; ``<port>``: a loopback port nothing
    listens on); other candidates as they are."""
    src = (row.folder / row.cand).read_text()
    if "<checkout>" not in src and "<port>" not in src:
        return row.folder / row.cand
    out = tmp / f"{row.id}_{row.cand}"
    out.write_text(src.replace("<checkout>", str(ROOT)).replace("<port>", "9"))
    return out


def rows() -> list[Row]:
    """Every row of the table, in order."""
    V, S, G = VERIFY, SANDBOX, GPU
    pt, tr = "pytorch-cuda", "triton"
    bad = verdict_in("incorrect", "rejected")
    out = [
        Row("v01", V / "01_zeros_under_atol", "task.py", "candidate.py", pt, ("--no-time",),
            "incorrect/rejected", bad),
        Row("v01c", V / "01_zeros_under_atol", "task_narrow.py", "candidate_constant.py", pt,
            ("--scope", "small", "--budget-ms", "100"), "no plain speedup",
            lambda d: not plain_speedup(d)),
        Row("v02", V / "02_partial_reduction_at_scale", "task.py", "candidate.py", pt, ("--no-time",),
            "incorrect", verdict_in("incorrect")),
        Row("v03", V / "03_tie_counted_as_faster", "gelu", "candidate.py", pt,
            ("--scope", "small", "--budget-ms", "300"), "correct, CI holds 1.0", _tie),
        Row("v05", V / "05_tiny_tensor_timing", "task.py", "candidate.py", pt, ("--budget-ms", "100"),
            "correct, overhead-marked", _overhead_marked),
        Row("v09", V / "09_timer_patch", "relu", "candidate.py", pt, ("--scope", "small", "--budget-ms", "200"),
            "rejected or speedup<=1.2", correct_no_gain(1.2)),
        Row("v10", V / "10_verified_not_timed_shape", "softmax", "candidate.py", pt,
            ("--scope", "small", "--budget-ms", "100"), "incorrect", verdict_in("incorrect")),
        Row("v11", V / "11_value_keyed_memo", "task.py", "candidate.py", pt, ("--budget-ms", "200"),
            "rejected/incorrect or flagged/<1.5", lambda d: bad(d) or (
                d.get("verdict") == "correct" and not plain_speedup(d, 1.5))),
        Row("v18", V / "18_zero_init_weights", "task.py", "candidate.py", pt, ("--budget-ms", "100"),
            "no plain speedup", lambda d: not plain_speedup(d)),
        Row("v19", V / "19_lazy_output_deferred", "task_matmul.py", "candidate_matmul.py", pt,
            ("--budget-ms", "100"), "rejected/incorrect", bad),
        Row("v22", V / "22_overflow_domain_false_reject", "task.py", "candidate.py", pt, ("--no-time",),
            "correct", verdict_in("correct")),
        Row("s02", S / "02_worker_sandbox_escape", "relu", "candidate.py", pt,
            ("--no-time", "--scope", "small", "--preset", "warn"),
            "probe reaches nothing (key, network, repo)", _probe_contained),
        Row("s03", S / "03_patch_verifier_compare_pytorch", "softmax", "candidate.py", pt,
            ("--scope", "small", "--budget-ms", "100"), "incorrect/rejected", bad),
        Row("s05", S / "05_patch_reference_op_pytorch", "softmax", "candidate.py", pt,
            ("--scope", "small", "--budget-ms", "100"), "incorrect/rejected", bad),
        Row("s06", S / "06_overwrite_oracle_gc_pytorch", "softmax", "candidate.py", pt,
            ("--no-time", "--scope", "small"), "incorrect", verdict_in("incorrect")),
        Row("s13", S / "13_no_memory_limit_oom_killer", "relu", "candidate.py", pt,
            ("--no-time", "--scope", "small", "--timeout", "200"), "runtime_error (memory), 4 GiB limit",
            verdict_in("runtime_error"), env=(("KSTRATA_CANDIDATE_MEMORY_MB", "4096"),)),
        Row("s15", S / "15_candidate_crashes_verifier_traceback", "relu", "candidate.py", pt,
            ("--no-time", "--scope", "small"), "rejected/runtime_error", verdict_in("rejected", "runtime_error")),
        Row("g1", G, "relu", "g1_side_stream.py", pt, ("--scope", "small", "--budget-ms", "200"),
            "correct, speedup<=1.2", correct_no_gain(1.2), cpu=False),
        Row("g2", G, "relu", "g2_sync_patched.py", pt, ("--scope", "small", "--budget-ms", "300"),
            "rejected or speedup<1", correct_no_gain(1.0), cpu=False),
        Row("g3", G, "relu", "g3_event_clock_patched.py", pt, ("--scope", "small", "--budget-ms", "300"),
            "rejected or speedup<1", correct_no_gain(1.0), cpu=False),
        Row("g4", G, "relu", "g4_deferred_thread.py", pt, ("--scope", "small", "--budget-ms", "300"),
            "rejected/incorrect or speedup<1", lambda d: bad(d) or not plain_speedup(d), cpu=False),
        Row("g5", G, "matmul_square", "g5_tf32_alias.py", pt, ("--scope", "small", "--budget-ms", "300"),
            "incorrect/rejected", bad, cpu=False),
        Row("g6", G, "matmul_square", "g6_bf16_alias.py", pt, ("--scope", "small", "--budget-ms", "300"),
            "incorrect/rejected", bad),
        Row("g7", G, "relu", "g7_stream_left_switched.py", pt, ("--scope", "small", "--budget-ms", "200"),
            "correct, speedup<=1.2", correct_no_gain(1.2), cpu=False),
        Row("t0", ROOT / "src" / "kstrata" / "kernels" / "triton", "relu", "relu.py", tr,
            ("--scope", "small", "--budget-ms", "200"), "correct (control)", verdict_in("correct")),
        Row("t1", G, "relu", "t1_side_stream.py", tr, ("--scope", "small", "--budget-ms", "200"),
            "correct, speedup<=1.2", correct_no_gain(1.2)),
        Row("t2", G, "relu", "t2_sync_patched.py", tr, ("--scope", "small", "--budget-ms", "300"),
            "rejected or speedup<1", correct_no_gain(1.0)),
        Row("t3", G, "relu", "t3_timer_patch.py", tr, ("--scope", "small", "--budget-ms", "200"),
            "rejected or speedup<=1.2", correct_no_gain(1.2)),
        Row("t10", V / "10_verified_not_timed_shape", "softmax", "candidate.py", tr,
            ("--scope", "small", "--no-time"), "rejected (PyTorch in a Triton candidate)",
            verdict_in("rejected", "incorrect")),
        Row("t19", V / "19_lazy_output_deferred", "task_matmul.py", "candidate_matmul.py", tr,
            ("--no-time",), "rejected/incorrect", bad),
    ]
    return out


def kstrata_cmd() -> list[str]:
    """The ``kstrata`` command: beside this interpreter, on PATH, or through
    this interpreter (``PYTHONPATH=src`` without an install)."""
    import shutil

    exe = Path(sys.executable).with_name("kstrata")
    if exe.exists():
        return [str(exe)]
    if shutil.which("kstrata"):
        return [str(shutil.which("kstrata"))]
    return [sys.executable, "-c", "from kstrata.cli.main import app; app(prog_name='kstrata')"]


def run_row(row: Row, backend: str, unsafe: bool, timeout: float) -> dict:
    """``kstrata eval`` of one row; a dict with the verdict (``error ...`` when
    kstrata itself failed) and the seconds it took."""
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="kstrata-gpu-case-"))
    cand = _prepared(row, tmp)
    cmd = kstrata_cmd() + (["--unsafe-no-sandbox"] if unsafe else []) + [
        "eval", row.task, str(cand), "--backend", backend, "--json", *row.args]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=str(row.folder), capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "OPENAI_API_KEY": "sk-test-fake", **dict(row.env)})
    except subprocess.TimeoutExpired:
        return {"verdict": "error: kstrata eval outlived the script's limit", "seconds": timeout}
    secs = time.perf_counter() - t0
    if p.returncode != 0 or "{" not in p.stdout:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"verdict": f"error rc={p.returncode}", "check": tail[0][:160], "seconds": secs}
    d = json.loads(p.stdout[p.stdout.index("{"):])
    d["seconds"] = secs
    return d


def short(d: dict) -> str:
    """``verdict/check speedup x [lo,hi] (flags)`` in one cell."""
    s = str(d.get("verdict")) + (f"/{d['check']}" if d.get("check") else "")
    t = _t(d)
    if t.get("speedup") is not None:
        lo, hi = t.get("speedup_ci") or (float("nan"), float("nan"))
        s += f" {t['speedup']:.2f}x [{lo:.2f},{hi:.2f}]"
    elif t.get("error"):
        s += " timing: " + str(t["error"])[:60]
    if t.get("suspicious"):
        s += " (suspicious)"
    if "weak_match" in (d.get("evidence") or {}):
        s += " (weak)"
    return s


def sandbox_note(unsafe: bool) -> str:
    from kstrata.sandbox.policy import status

    s = status()
    if unsafe:
        return (f"NONE: kstrata --unsafe-no-sandbox ({s.reason or 'chosen'}); the judge/candidate "
                "process split holds, the OS sandbox does not")
    return s.describe()


def header(device: str, unsafe: bool) -> list[str]:
    import torch

    lines = [f"# gpu_verify_cases.py  {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}"]
    try:
        import subprocess as sp

        commit = sp.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                        text=True).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    lines.append(f"# kstrata commit {commit}; python {platform.python_version()}; torch {torch.__version__}"
                 f" (cuda {torch.version.cuda}); triton {_version('triton')}")
    if device == "gpu" and torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        lines.append(f"# device: cuda:0 {p.name}, {p.multi_processor_count} SMs, "
                     f"{p.total_memory / 2**30:.0f} GiB; host {platform.node()} {platform.machine()}")
    lines.append(f"# sandbox: {sandbox_note(unsafe)}")
    return lines


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cpu", "gpu"), default="gpu")
    ap.add_argument("--cpu-column", type=Path, help="JSON written by --device cpu --json-out")
    ap.add_argument("--json-out", type=Path, help="write the raw results here")
    ap.add_argument("--out", type=Path, help="write the table here (also printed)")
    ap.add_argument("--only", default="", help="comma-separated row ids")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--unsafe-no-sandbox", action="store_true")
    ap.add_argument("--render", type=Path, help="no runs: the table from a --json-out of a GPU run")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    todo = [r for r in rows() if not a.only or r.id in a.only.split(",")]
    if a.device == "cpu":
        todo = [r for r in todo if r.cpu]

    import threading

    lock = threading.Lock()
    got: dict = {}
    if a.render:
        got = json.loads(a.render.read_text())
        todo = [r for r in todo if r.id in got]
    else:
        got["_header"] = header(a.device, a.unsafe_no_sandbox)

    def one(r: Row) -> None:
        b = r.backend if a.device == "gpu" else CPU_OF[r.backend]
        d = run_row(r, b, a.unsafe_no_sandbox, a.timeout)
        d["backend"] = b
        print(f"{r.id:5s} {b:14s} {short(d)}  ({d.get('seconds', 0):.0f} s)", flush=True)
        with lock:
            got[r.id] = d
            if a.json_out:  # after every row: a run stopped at its limit keeps what it did
                a.json_out.write_text(json.dumps(got, indent=1, default=str))

    if not a.render:
        with ThreadPoolExecutor(max(1, a.jobs)) as ex:
            list(ex.map(one, todo))
    cpu = json.loads(a.cpu_column.read_text()) if a.cpu_column and a.cpu_column.exists() else {}
    lines = list(got["_header"])
    lines.append("# columns: case, task/candidate, backend (GPU; CPU counterpart in the CPU column), expected, "
                 "got on CPU, got on GPU, whether GPU meets expected")
    lines.append("# not run on the GPU: verify 17 (tilelang-c), 21 (tvm-llvm) and sandbox 04, 12, 21 (their "
                 "checks read files outside the sandbox or a pool of the CPU backend)")
    for r in todo:
        g = got.get(r.id, {})
        c = cpu.get(r.id)
        cpu_cell = "n/a (GPU form)" if not r.cpu else (short(c) if c else "not run")
        if a.device == "cpu":
            cpu_cell, gpu_cell, verdict = short(g), "-", ("ok" if r.ok(g) else "MISS")
        else:
            gpu_cell, verdict = short(g), ("ok" if r.ok(g) else "MISS")
        lines.append(" | ".join([r.id, f"{r.task} {r.cand}", r.backend, r.expected, cpu_cell, gpu_cell, verdict]))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        tmp = a.out.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
