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
