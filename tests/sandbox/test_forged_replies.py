"""Replies the candidate writes itself, straight into its process's end of
the pipe to the judge (cases ``forged_reply``; red-team round of 2026-12-04):
a reply's buffers are bounded for every request (none for a reply that
carries none), and a message that stops arriving ends at the time limit,
blamed on the candidate, instead of holding the judge in a blocking read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kstrata.sandbox import status, wire

REPO = Path(__file__).resolve().parents[2]
CASE = Path(__file__).resolve().parent / "cases" / "forged_reply"
KSTRATA = str(Path(sys.executable).with_name("kstrata"))

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def kstrata_eval(tmp_path: Path, mode: str, *args: str) -> dict:
    """``kstrata eval relu`` of the case's candidate in ``mode``; its JSON."""
    candidate = tmp_path / f"{mode}.py"
    candidate.write_text((CASE / "candidate.py").read_text().replace("<mode>", mode))
    p = subprocess.run([KSTRATA, "eval", "relu", str(candidate), "--backend", "pytorch", "--json", "--no-time",
                        "--scope", "small", "--preset", "warn", *args],
                       capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-3000:]
    return json.loads(p.stdout[p.stdout.index("{"):])


def test_a_forged_load_reply_with_buffers_is_refused_unread(tmp_path):
    d = kstrata_eval(tmp_path, "flood")
    assert d["verdict"] == "rejected" and d["check"] == "protocol", d["evidence"]
    assert "bytes of buffers" in d["evidence"]["message"], d["evidence"]


def test_a_reply_that_stops_arriving_ends_at_the_time_limit_blamed_on_the_candidate(tmp_path):
    t0 = time.monotonic()
    d = kstrata_eval(tmp_path, "stall", "--timeout", "10")
    assert d["verdict"] == "timeout", d["evidence"]
    msg = d["evidence"]["message"]
    assert "stopped arriving" in msg and "reference or the oracle" not in msg, msg
    assert time.monotonic() - t0 < 120


def test_recv_gives_up_on_a_pause_inside_a_message(monkeypatch):
    monkeypatch.setattr(wire, "IDLE_S", 0.3)
    r, w = os.pipe()
    try:
        os.write(w, (100).to_bytes(8, "big") + b"{")
        with pytest.raises(wire.Stalled, match="1 of its 100 bytes"):
            wire.recv(r, deadline=float("inf"))
    finally:
        os.close(r)
        os.close(w)


def test_recv_reads_a_message_written_in_pieces():
    r, w = os.pipe()
    body = json.dumps({"ok": True}).encode()

    def write() -> None:
        os.write(w, len(body).to_bytes(8, "big"))
        time.sleep(0.2)
        os.write(w, body)

    t = threading.Thread(target=write)
    t.start()
    try:
        h, bufs = wire.recv(r, deadline=time.monotonic() + 10)
        assert h["ok"] is True and bufs == []
    finally:
        t.join()
        os.close(r)
        os.close(w)


def test_a_reply_nested_too_deep_for_the_judges_walks_is_a_protocol_rejection(tmp_path):
    """600 levels: JSON's reader takes them, the judge's own recursive walk
    over the reply (its strings made printable) did not (a RecursionError
    traceback out of ``kstrata eval``)."""
    d = kstrata_eval(tmp_path, "deep")
    assert d["verdict"] == "rejected" and d["check"] == "protocol", d["evidence"]
    assert "levels deep" in d["evidence"]["message"], d["evidence"]


def test_depth_counts_without_recursion():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    assert wire.depth({"a": deep}) == 5002 and wire.depth(3) == 0 and wire.depth({"a": [1, {}]}) == 3


def test_bytes_already_in_the_pipe_are_read_after_the_deadline():
    r, w = os.pipe()
    body = json.dumps({"ok": True}).encode()
    os.write(w, len(body).to_bytes(8, "big") + body)
    try:
        h, _ = wire.recv(r, deadline=time.monotonic() - 1.0)
        assert h["ok"] is True
    finally:
        os.close(r)
        os.close(w)
