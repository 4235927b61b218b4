"""What the candidate process's harness reads a returned output through is in
the run-time watch (red-team rt52): a relu that returned two kept buffers in
turn (rt3_output_ring) replaced ``torch.UntypedStorage.data_ptr``, a Python
method the watch did not cover, to answer fresh numbers for its buffers, and
the held-output and kept-output checks (``output_reused``), which compare
those numbers, never fired: correct, with the output's allocation out of its
time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kstrata.sandbox import status
from kstrata.verify.integrity.watch import RuntimeWatch

CASES = Path(__file__).resolve().parent / "cases" / "harness_reads"
KSTRATA = str(Path(sys.executable).with_name("kstrata"))


@pytest.mark.parametrize("owner, name", [
    (lambda: torch.UntypedStorage, "data_ptr"),
    (lambda: torch.UntypedStorage, "nbytes"),
    (lambda: __import__("torch.multiprocessing.reductions", fromlist=["x"]).StorageWeakRef, "expired"),
    (lambda: torch.Tensor, "numpy"),
    (lambda: torch.Tensor, "shape"),
    # the operators of the freshen in the untimed flush request (its factors' slice, its rotation's test)
    (lambda: torch.Tensor, "__getitem__"),
    (lambda: torch.Tensor, "__radd__"),
    # a method of a kstrata class the watch holds by name: the flush request calls it after the freshen
    (lambda: __import__("kstrata.measure.cache_flush", fromlist=["x"]).CacheFlusher, "flush"),
    # what the transport calls for every request and reply (between requests too)
    (lambda: __import__("os"), "read"),
    (lambda: __import__("select"), "select"),
    (lambda: __import__("kstrata.sandbox.wire", fromlist=["x"]), "_write_all"),
    # builtins the harness and its transport call in every request (a request's copy index, a reply's buffers)
    (lambda: __import__("builtins"), "int"),
    (lambda: __import__("builtins"), "memoryview"),
])
def test_a_replaced_reader_is_seen_and_put_back(owner, name):
    cls = owner()
    watch = RuntimeWatch()
    watch.arm()
    orig = cls.__dict__.get(name)
    setattr(cls, name, lambda self, *a, **k: 0)
    try:
        assert any(c.endswith(f".{name}") for c in watch.changed()), watch.changed()
    finally:
        watch.restore()
        if orig is None:
            delattr(cls, name)  # restore() put the inherited descriptor on the class itself
        else:
            setattr(cls, name, orig)
    assert not watch.changed()


@pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")
@pytest.mark.parametrize("task, case, backend", [
    ("relu", "ring_storage_patch.py", "pytorch"), ("softmax", "flusher_hook.py", "pytorch"),
    ("softmax", "read_hook.py", "pytorch"),
    ("softmax", "triton_torch_recorders_patched.py", "triton-interp"),
    ("softmax", "triton_torch_recorders_module_swapped.py", "triton-interp")])
def test_a_candidate_that_replaced_what_the_harness_calls_is_rejected(task, case, backend):
    """``ring_storage_patch``: kept output buffers behind a replaced
    ``UntypedStorage.data_ptr``; ``flusher_hook``: the freshened copy's
    softmax computed in a replaced ``CacheFlusher.flush``, in the untimed
    flush request (correct, 3.8x with only notes before); ``read_hook``: the
    same in a replaced ``os.read``, between the judge's requests (correct,
    1.5x with only notes before); ``triton_torch_*``: a Triton softmax whose
    softmax is PyTorch's behind blinded op recorders (correct before)."""
    p = subprocess.run([KSTRATA, "eval", task, str(CASES / case), "--backend", backend, "--json", "--scope", "small",
                        "--preset", "warn", "--budget-ms", "200"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    d = json.loads(p.stdout[p.stdout.index("{"):])
    assert d["verdict"] == "rejected", (d["verdict"], d.get("message"))
    assert d["check"] in ("no_runtime_patching", "timed_output", "no_torch_compute"), (d["check"], d["message"])
