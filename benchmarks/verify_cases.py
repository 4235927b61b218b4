"""Run every verifier red-team case and print a table: case, expected, got, pass/fail.

Each case folder (``../shared/cases/verify`` by default, else the copies under
``tests/verify/cases``) is run the way its ``expected.txt`` describes, through
``kstrata eval`` (``--json``; timing cases with a small ``--budget-ms`` and
small hidden shapes where the case allows), ``kstrata tasks check`` for the
weak-task cases, and :func:`kstrata.serve.service.evaluate` for the TVM case
21 (graph + schedule sources, three secrets including the case's run secret).
The same assertions are in ``tests/verify/test_cases_verify.py``.

Usage (from the repository root)::

    .venv/bin/python benchmarks/verify_cases.py [CASES_DIR] [--out benchmarks/results/verify_cases.txt]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
KSTRATA = str(Path(sys.executable).with_name("kstrata"))
DEFAULT = Path("/work/shared/cases/verify")
FALLBACK = ROOT / "tests" / "verify" / "cases"

#: What each case should give, where a folder has no expected.txt (the test copies).
EXPECTED = {
    "01": "zeros incorrect/rejected; narrow task WEAK; constant not plain correct with a speedup",
    "02": "incorrect",
    "03": "correct; speedup interval contains 1.0; not fast_1",
    "05": "correct; timing marked overhead-dominated",
    "18": "task WEAK; no-op not plain correct with a speedup",
    "22": "correct",
}


def kstrata(case: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([KSTRATA, *args], cwd=str(case), capture_output=True, text=True, timeout=timeout)


def ev(case: Path, task: str, cand: str, *args: str, backend: str = "pytorch") -> dict:
    p = kstrata(case, "eval", task, cand, "--backend", backend, "--json", *args)
    if p.returncode != 0 or "{" not in p.stdout:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"verdict": f"error rc={p.returncode}", "check": tail[0][:120], "timing": None, "evidence": {}}
    return json.loads(p.stdout[p.stdout.index("{"):])


def short(d: dict) -> str:
    s = d["verdict"] + (f"/{d['check']}" if d.get("check") else "")
    t = d.get("timing") or {}
    if t.get("speedup") is not None:
        lo, hi = t.get("speedup_ci") or (None, None)
        s += f" speedup {t['speedup']:.2f} [{lo:.2f},{hi:.2f}]"
    if t.get("suspicious"):
        s += " (suspicious)"
    if "weak_match" in (d.get("evidence") or {}):
        s += " (weak)"
    return s


def plain_speedup(d: dict) -> bool:
    t = d.get("timing") or {}
    flagged = bool(t.get("suspicious")) or "weak_match" in (d.get("evidence") or {}) or bool(d.get("warnings"))
    return d["verdict"] == "correct" and (t.get("speedup") or 0) > 1.0 and not flagged


def weak(case: Path, task: str) -> bool:
    p = kstrata(case, "tasks", "check", task)
    return p.returncode == 1 and "WEAK" in p.stdout


def run_case(name: str, case: Path) -> tuple[str, bool]:
    """(what happened, whether it is what the case expects)."""
    n = name[:2]
    if n == "01":
        a = ev(case, "task.py", "candidate.py", "--no-time")
        w = weak(case, "task_narrow.py")
        b = ev(case, "task_narrow.py", "candidate_constant.py", "--scope", "small", "--budget-ms", "100")
        ok = a["verdict"] in ("incorrect", "rejected") and w and not plain_speedup(b)
        return f"zeros: {short(a)}; narrow WEAK={w}; constant: {short(b)}", ok
    if n == "02":
        a = ev(case, "task.py", "candidate.py", "--no-time")
        return short(a), a["verdict"] == "incorrect"
    if n == "03":
        from kstrata.bench.metrics import TaskOutcome

        a = ev(case, "gelu", "candidate.py", "--scope", "small", "--budget-ms", "300")
        t = a.get("timing") or {}
        ci = t.get("speedup_ci")
        fast = bool(t.get("speedup")) and TaskOutcome(task="gelu", correct=True, speedup=t["speedup"],
                                                      speedup_ci=tuple(ci) if ci else None).fast(1.0)
        ok = a["verdict"] == "correct" and ci is not None and ci[0] <= 1.0 <= ci[1] and not fast
        return short(a) + f"; fast_1={fast}", ok
    if n == "05":
        a = ev(case, "task.py", "candidate.py", "--budget-ms", "100")
        t = a.get("timing") or {}
        marked = "overhead" in " ".join(map(str, t.get("suspicious") or [])).lower() or t.get("speedup") is None
        return short(a) + f"; overhead-marked={marked}", a["verdict"] == "correct" and marked
    if n == "09":
        a = ev(case, "relu", "candidate.py", "--scope", "small", "--budget-ms", "200")
        s = (a.get("timing") or {}).get("speedup")
        return short(a), a["verdict"] == "rejected" or (a["verdict"] == "correct" and (s is None or s <= 1.2))
    if n == "10":
        a = ev(case, "softmax", "candidate.py", "--scope", "small", "--budget-ms", "100")
        return short(a), a["verdict"] == "incorrect"
    if n == "11":
        a = ev(case, "task.py", "candidate.py", "--budget-ms", "200")
        t = a.get("timing") or {}
        ok = a["verdict"] in ("rejected", "incorrect") or (
            a["verdict"] == "correct" and (bool(t.get("suspicious")) or (t.get("speedup") or 0) < 1.5))
        return short(a), ok
    if n == "17":
        a = ev(case, "relu", "candidate.py", "--no-time", "--scope", "small", backend="tilelang-c")
        return short(a), a["verdict"] == "rejected"
    if n == "18":
        w = weak(case, "task.py")
        a = ev(case, "task.py", "candidate.py", "--budget-ms", "100")
        return f"WEAK={w}; no-op: {short(a)}", w and not plain_speedup(a)
    if n == "19":
        a = ev(case, "task_matmul.py", "candidate_matmul.py", "--budget-ms", "100")
        return short(a), a["verdict"] in ("rejected", "incorrect")
    if n == "21":
        from kstrata.backends.registry import get_backend
        from kstrata.serve.service import evaluate
        from kstrata.tasks.loader import resolve_task

        src = {"graph": (case / "graph.py").read_text(), "schedule": (case / "schedule.py").read_text()}
        got = []
        for secret in ((case / "run1_secret.txt").read_text().strip(), "0" * 64, "5eed" * 16):
            out = evaluate(resolve_task("layernorm"), get_backend("tvm-llvm"), src, secret=secret, time_it=False)
            got.append(str(out.public.get("verdict")))
        return "3 secrets: " + ", ".join(got), all(g == "incorrect" for g in got)
    if n == "22":
        a = ev(case, "task.py", "candidate.py", "--no-time")
        return short(a), a["verdict"] == "correct"
    return "no runner for this case", False


def expected_of(name: str, case: Path) -> str:
    f = case / "expected.txt"
    if f.exists():
        text = " ".join(f.read_text().split())
        return text.split("expected:", 1)[-1].strip()[:110]
    return EXPECTED.get(name[:2], "?")


def versions() -> str:
    import torch

    out = [f"python {platform.python_version()}", f"torch {torch.__version__}"]
    for mod in ("tvm", "triton"):
        try:
            out.append(f"{mod} {__import__(mod).__version__}")
        except Exception:  # noqa: BLE001 - versions are best effort
            pass
    from kstrata.sandbox import status

    out.append(f"sandbox: {status().describe()}")
    return ", ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="?", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "verify_cases.txt")
    ap.add_argument("--only", default="", help="comma-separated case number prefixes")
    a = ap.parse_args()
    root = a.cases or (DEFAULT if DEFAULT.is_dir() else FALLBACK)
    only = {s.strip() for s in a.only.split(",") if s.strip()}
    lines = [f"# verify_cases: {datetime.datetime.now().isoformat(timespec='seconds')}",
             f"# machine: {platform.node()} {platform.machine()} {os.cpu_count()} CPUs, {platform.platform()}",
             f"# versions: {versions()}",
             f"# cases: {root}", ""]
    rows = []
    for case in sorted(p for p in root.iterdir() if p.is_dir()):
        if only and case.name[:2] not in only:
            continue
        t0 = time.perf_counter()
        try:
            got, ok = run_case(case.name, case)
        except Exception as e:  # noqa: BLE001 - a failing case is a row
            got, ok = f"error: {type(e).__name__}: {e}"[:200], False
        rows.append((case.name, expected_of(case.name, case), got, "pass" if ok else "FAIL",
                     f"{time.perf_counter() - t0:.0f}s"))
        print(" | ".join(rows[-1]), flush=True)
    lines.append("| case | expected | got | result | time |")
    lines.append("| --- | --- | --- | --- | --- |")
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines.append("")
    lines.append(f"{sum(r[3] == 'pass' for r in rows)} of {len(rows)} cases as expected")
    text = "\n".join(lines) + "\n"
    print(text)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(a.out)


if __name__ == "__main__":
    main()
