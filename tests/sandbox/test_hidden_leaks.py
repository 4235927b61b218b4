"""Nothing the candidate chose reaches the verdict from a hidden test (cases
``hidden_leak``; red-team round of 2026-12-04): a hidden test's finding keeps
no evidence (the candidate named its threads after the hidden shape), a death
on a hidden test names its cause only (a forged reply's byte count, and the
most an honest reply holds, were the hidden shape), and the load seconds its
process reports at hidden shapes are not added up."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kstrata.sandbox import status

REPO = Path(__file__).resolve().parents[2]
CASE = Path(__file__).resolve().parent / "cases" / "hidden_leak"
KSTRATA = str(Path(sys.executable).with_name("kstrata"))

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def kstrata_eval(name: str) -> dict:
    p = subprocess.run([KSTRATA, "eval", "relu", str(CASE / name), "--backend", "pytorch", "--json", "--no-time",
                        "--scope", "small", "--preset", "warn"], capture_output=True, text=True, timeout=300,
                       cwd=str(REPO))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-3000:]
    return json.loads(p.stdout[p.stdout.index("{"):])


def test_a_hidden_findings_evidence_is_withheld():
    d = kstrata_eval("thread_names.py")
    assert d["verdict"] == "rejected" and d["check"] == "no_threads_left", d["evidence"]
    assert d["evidence"].get("stage") == "hidden", d["evidence"]
    assert "hidden_B" not in json.dumps(d["evidence"]) + json.dumps(d["warnings"]), d["evidence"]


def test_a_death_on_a_hidden_test_quotes_no_number():
    d = kstrata_eval("wire_numbers.py")
    assert d["verdict"] == "rejected" and d["check"] == "protocol", d["evidence"]
    assert "hidden test" in d["evidence"]["message"], d["evidence"]
    assert not re.search(r"\d{3,}", json.dumps(d["evidence"])), d["evidence"]


def test_load_seconds_reported_at_hidden_shapes_are_not_added():
    d = kstrata_eval("load_seconds.py")
    if d["verdict"] == "rejected":  # a forger that replaces kstrata.sandbox.wire's functions is stopped by the watch (d79eb8b) before the judge reads its reply
        assert d["check"] == "no_runtime_patching" and "kstrata.sandbox.wire" in d["evidence"]["message"], d
        return
    assert d["verdict"] == "correct", d["evidence"]
    assert d["load_seconds"] < 1000, d["load_seconds"]  # each hidden load said 1000 + B + D / 1e6
