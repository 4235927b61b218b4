"""Drives candidate.py as the judge's timer does (RemoteCandidate + RemoteTimer, 8 timed calls, a fetch); prints the fetch's findings.
Run from the repository root: PYTHONPATH=src .venv/bin/python tests/measure/cases/rt88_tail_on_next_request/run.py"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/measure
import torch
from pathlib import Path
from kstrata.sandbox import client
import test_rt81_measure_pool_tail as T
from kstrata.measure.remote import RemoteCandidate, RemoteTimer
src = (Path(__file__).resolve().parent / "candidate.py").read_text()
client.close_zygotes()
proc = T._process(src)
try:
    rc = RemoteCandidate(proc)
    rc.stage([[torch.randn(1024, 1024)] for _ in range(2)], None, False)
    rc.calibrate()
    timer = RemoteTimer(lambda t: 0.0, "cpu", untrusted=[rc])
    ts = []
    for thunk in rc.thunks(2) * 4:
        ts.append(timer(thunk))
    h, b = proc.ok({"op": "fetch"})
    print("TIMES", ts)
    print("FINDINGS", h.get("findings"))
    print("IDLE", getattr(rc, "idle_gap_ms", None))
finally:
    proc.close()
client.close_zygotes()
