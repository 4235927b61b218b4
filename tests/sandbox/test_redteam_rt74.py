"""Red-team round rt74 (sandbox and judge tampering): each test fails before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kstrata.sandbox import status, wire

CASES = Path(__file__).resolve().parent / "cases"
REPO = Path(__file__).resolve().parents[2]
KSTRATA = str(Path(sys.executable).with_name("kstrata"))

sandboxed = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def _eval(case: Path, *args: str) -> dict:
    """``kstrata eval relu CASE --backend pytorch --json --no-time --scope small --preset warn``:
    exits 0 without a traceback; its JSON."""
    p = subprocess.run([KSTRATA, "eval", "relu", str(case), "--backend", "pytorch", "--json", "--no-time",
                        "--scope", "small", "--preset", "warn", *args],
                       capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-3000:]
    return json.loads(p.stdout[p.stdout.index("{"):])


def _message(header: bytes) -> tuple[int, int]:
    r, w = os.pipe()
    os.write(w, len(header).to_bytes(8, "big") + header)
    os.close(w)
    return r, w


def test_a_reply_integer_past_64_bits_is_malformed_and_a_task_integer_is_not():
    """The judge reads the candidate's replies with ``bounded_ints``: 10**400 is refused
    before any check sees it, 2**64 - 1 and -2**63 are read; the candidate process reads
    the judge's messages unbounded (a task's own int init input may be wider)."""
    big = b'{"ok": true, "mean": 1' + b"0" * 400 + b"}"
    r, _ = _message(big)
    with pytest.raises(wire.WireError, match="401 digits"):
        wire.recv(r, bounded_ints=True)
    os.close(r)
    r, _ = _message(big)
    assert wire.recv(r)[0]["mean"] == 10 ** 400
    os.close(r)
    r, _ = _message(b'{"a": %d, "b": %d}' % ((1 << 64) - 1, -(1 << 63)))
    assert wire.recv(r, bounded_ints=True)[0] == {"a": (1 << 64) - 1, "b": -(1 << 63)}
    os.close(r)


@sandboxed
def test_a_forged_load_reply_with_a_huge_integer_is_the_candidates_fault():
    """Case cases/rt74_bigint_reply: a forged load reply's parameter summary held a mean of
    10**400 and the verification ended in an OverflowError traceback (VerifierError,
    exit 1). Now the reply is malformed: rejected, check protocol."""
    d = _eval(CASES / "rt74_bigint_reply" / "candidate.py")
    assert d["verdict"] == "rejected" and d["check"] == "protocol", d["evidence"]
    assert "64-bit range" in d["evidence"]["message"], d["evidence"]


def _judged_slowly(source: str, monkeypatch) -> str | None:
    """Load ``source`` for relu in a fresh pytorch sandbox, then six calls 0.6 s apart (the
    judge at work between them); the cause the process was ended for, or None."""
    import time

    import torch

    from kstrata.sandbox import CandidateDied, CandidateProcess, idle_cpu
    from kstrata.sandbox.client import fresh
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import task_record

    # a low bar: the spinners' share of a machine that others keep busy is small (autogroup)
    monkeypatch.setattr(idle_cpu, "SHARE", 0.02)
    monkeypatch.setattr(idle_cpu, "MIN_MS", 20.0)
    task = resolve_task("relu")
    proc = fresh(CandidateProcess("pytorch", memory_mb=2048))
    try:
        h, _ = proc.request({"op": "load", "backend": "pytorch", "task": task_record(task),
                             "sources": {"source": source}, "shape": task.small_shapes[0], "seed": 0,
                             "init": []}, timeout_s=120)
        assert h.get("ok"), h
        for _ in range(6):
            time.sleep(0.6)
            bufs: list = []
            h, _ = proc.request({"op": "call", "inputs": wire.encode([torch.randn(4, 4)], bufs)}, bufs,
                                timeout_s=120)
            assert h.get("ok"), h
    except CandidateDied as e:
        return f"{e.cause}: {e}"
    finally:
        proc.close()
    return None


@sandboxed
def test_a_sandbox_busy_while_the_judge_works_is_ended(monkeypatch):
    """Case cases/rt74_spin_while_judged: processes forked at import spun between the
    candidate's requests, while the judge drew inputs and ran the reference and the oracle,
    and nothing saw it (16 of them kept a 24 s verification running past 10 minutes on this
    machine). Now the sandbox's CPU over the judge's gaps ends it (cause 'busy', which the
    judge reports as rejected, no_threads_left); an honest candidate uses none there."""
    spin = (CASES / "rt74_spin_while_judged" / "candidate.py").read_text()
    why = _judged_slowly(spin, monkeypatch)
    assert why is not None and why.startswith("busy: ") and "while the judge worked" in why, why
    honest = "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n" \
             "    def forward(self, x):\n        return torch.relu(x)\n"
    assert _judged_slowly(honest, monkeypatch) is None


def test_a_busy_sandbox_is_rejected_by_the_judge():
    """The judge's verdict for cause 'busy' (kstrata.verify.runner.died): rejected,
    no_threads_left; on a hidden test the message names the cause only."""
    from kstrata.sandbox import CandidateDied
    from kstrata.verify.runner import died

    e = CandidateDied("busy", "the candidate's processes used 3 s of CPU in 2 s while the judge worked")
    public, hidden = died(e, None, True), died(e, None, False)
    assert (public.verdict.value, public.check) == ("rejected", "no_threads_left"), public
    assert "while the judge worked" in str(public)
    assert "kept the CPUs busy between its requests" in str(hidden) and "3 s" not in str(hidden)


def test_a_timing_ended_for_a_busy_sandbox_rejects_as_the_verification_does():
    """The timing's error text crosses the judge's worker pool: a 'busy' death there is the candidate's fault
    (rejected, no_threads_left), not a failed timing beside a correct verdict (rt49_helpers read correct)."""
    from kstrata.sandbox.idle_cpu import BUSY_MARK, timing_rejection

    said = f"exception: CandidateDied: the candidate's processes used 4.2 s of CPU in 3.8 s {BUSY_MARK} (inputs)"
    assert timing_rejection(said) == ("no_threads_left", said.split("CandidateDied: ", 1)[-1])
    assert timing_rejection("exception: TimedOutputMismatch: call 3 differs")[0] == "timed_output"
    assert timing_rejection("exception: CandidateDied: the candidate process exited (code 1)") is None
