"""Replies of a harness the candidate patched: the judge rejects their
shape, it does not end in a traceback (red-team round 3, sandbox: a
candidate that found the harness through ``gc`` and sent ``outputs: 5``
crashed the verifier with a TypeError)."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status
from kstrata.sandbox.client import malformed

PATCHES_REPLY = '''
import torch
import torch.nn as nn
import gc as _gc


def _patch():
    # the harness's class is sealed: its replies are forged on their way out, in the wire module
    wire = next(m for m in _gc.get_objects() if type(m).__name__ == "module"
                and getattr(m, "__name__", "") == "kstrata.sandbox.wire")
    if getattr(wire, "patched", False):
        return
    send = wire.send

    def fake(fd, h, *a, **k):
        if isinstance(h, dict) and "outputs" in h:
            h = {**h, "outputs": 5}
        return send(fd, h, *a, **k)

    wire.send, wire.patched = fake, True


class ModelNew(nn.Module):
    def forward(self, x):
        _patch()
        return torch.relu(x)
'''


@pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")
def test_a_forged_reply_shape_is_a_protocol_rejection():
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import verify_candidate

    # a judge worker of its own: the judge sends a shape's first test alone only once per process
    # (runner._BYTES), so in a warm worker where relu ran before every public test went in batches, whose reply
    # nests the outputs this candidate forges, and the first forged reply came at a hidden shape (read "on a
    # hidden test" in the full suite); max_calls makes pool_for start one instead of lending a warm one
    pool = pool_for(get_backend("pytorch"), max_calls=1000)
    try:
        ev = verify_candidate(resolve_task("relu"), "pytorch", {"source": PATCHES_REPLY}, secret="5eed" * 4,
                              pool=pool, scope="small", preset="warn")
    finally:
        pool.close()
    assert ev.verdict.value == "rejected" and ev.check in ("protocol", "no_runtime_patching"), ev.evidence
    if ev.check == "no_runtime_patching":  # a forger that replaces kstrata.sandbox.wire's functions is stopped by the watch (d79eb8b) before the judge reads its reply
        assert "kstrata.sandbox.wire" in ev.evidence["message"], ev.evidence
    else:
        assert "outputs is a int" in ev.evidence["message"]


@pytest.mark.parametrize("reply, problem", [
    ({"ok": True, "outputs": [], "findings": []}, None),
    ({"ok": True, "findings": None}, None),
    ([1], "a list, not a dict"),
    ({"ok": True, "outputs": 5}, "outputs is a int"),
    ({"ok": True, "inputs": {"a": 1}}, "inputs is a dict"),
    ({"ok": True, "replies": [{"ok": True, "findings": "x"}]}, "in a batch: findings is a str"),
    ({"ok": True, "replies": [3]}, "in a batch: a int"),
])
def test_malformed_names_what_is_wrong(reply, problem):
    got = malformed(reply)
    assert (got is None) if problem is None else (got is not None and got.startswith(problem)), got


@pytest.mark.parametrize("body", [b"[" * 200000 + b"]" * 200000, b'{"ok": true, "x": ' + b"7" * 20000 + b"}",
                                  b"\xff\xfe"])
def test_an_unreadable_header_is_a_wire_error(body):
    """A header nested too deep for the JSON reader, or holding an integer
    past Python's digit limit, raised RecursionError / ValueError out of the
    judge (red-team round 3: the candidate replaced ``wire.send`` in its process)."""
    import os

    from kstrata.sandbox import wire

    r, w = os.pipe()
    try:
        os.write(w, wire._LEN.pack(len(body)))
        with os.fdopen(w, "wb", closefd=False) as f:  # more than a pipe holds: written by a thread
            import threading

            t = threading.Thread(target=lambda: (f.write(body), f.flush()), daemon=True)
            t.start()
            with pytest.raises(wire.WireError):
                wire.recv(r)
            t.join(10)
    finally:
        os.close(r)
        os.close(w)


def _recv_body(body: bytes):
    import os
    import threading

    from kstrata.sandbox import wire

    r, w = os.pipe()
    try:
        os.write(w, wire._LEN.pack(len(body)))
        with os.fdopen(w, "wb", closefd=False) as f:
            t = threading.Thread(target=lambda: (f.write(body), f.flush()), daemon=True)
            t.start()
            try:
                return wire.recv(r)
            finally:
                t.join(10)
    finally:
        os.close(r)
        os.close(w)


def test_a_header_of_millions_of_tiny_values_is_refused_before_it_is_parsed():
    """Sandbox red-team 2026-12-04: a forged 64 MiB header of ``{}`` items
    would build ~1.4 GB of Python objects in the judge (no memory limit)."""
    import tracemalloc

    from kstrata.sandbox import wire

    body = b'{"ok": true, "x": [' + b"{}," * (wire.MAX_HEADER_ITEMS + 10) + b'{}]}'
    tracemalloc.start()
    try:
        with pytest.raises(wire.WireError, match="JSON values"):
            _recv_body(body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(body), peak  # the raw bytes (and the count), never the objects
    # an honest header well over any real one still reads: a long message and 50,000 timings
    honest = b'{"ok": true, "message": "' + b"a, " * 30000 + b'", "times": [' + b"0.125," * 50000 + b'1.0]}'
    header, buffers = _recv_body(honest)
    assert header["ok"] is True and len(header["times"]) == 50001 and buffers == []


@pytest.mark.parametrize("shape", [[0, 2**70], [0, 2**62, 2**62], [0] * 65])
def test_an_impossible_tensor_shape_is_a_wire_error(shape):
    from kstrata.sandbox import wire

    with pytest.raises(wire.WireError):
        wire.decode({"__tensor__": 0, "dtype": "float32", "shape": shape}, [b""])
