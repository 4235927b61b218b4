"""A verification whose candidate process starts from the candidate's own
kernel cache, written by an earlier process that ran hidden tests, says
nothing of a failure but its verdict and check (issue #18): a candidate that
records what its hidden tests were in its cache and fails its next
verification's public stage on purpose, with them in its message, gets them
to nobody (:func:`kstrata.verify.runner.withhold_details`)."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

pytestmark = [pytest.mark.usefixtures("keep_idle_processes"), pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")]

#: correct the first time; the next process that finds its note raises with the note in the message
RECORDS = '''
import os
import torch
import torch.nn as nn

_d = os.environ["TRITON_CACHE_DIR"]
_note = os.path.join(_d, "note")
os.makedirs(_d, exist_ok=True)
if not os.path.exists(_note):
    with open(_note, "w") as f:
        f.write(str(os.getpid()) + ";")
_second = open(_note).read().split(";")[0] != str(os.getpid())  # an earlier process wrote it


class ModelNew(nn.Module):
    def forward(self, x):
        if _second:
            raise RuntimeError("LEAKED-" + open(_note).read()[:300])
        with open(_note, "a") as f:
            f.write("x".join(str(s) for s in x.shape) + ";")
        return torch.softmax(x, dim=-1)
'''


def test_a_failure_after_a_cache_written_in_hidden_tests_says_nothing(tmp_path, monkeypatch):
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import runner
    from kstrata.verify.runner import WITHHELD, run_protocol

    from kstrata.sandbox import client

    # the candidate tells its processes apart by PID: the second must fork in the zygote the first one marked,
    # which a list left full by earlier tests in this process ends first (ad9e1a3; a fresh zygote repeats PIDs)
    client.close_zygotes()
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path))
    # the static checks off: a hostile candidate gets past them, and the sandbox must hold without them
    monkeypatch.setattr(runner, "_static_stage", lambda ctx: None)
    task = resolve_task("softmax")
    src = {"source": RECORDS}
    first = run_protocol(task, "pytorch", src, "withheld-test", "warn", "small")
    assert first["verdict"] == "correct", first["evidence"]
    second = run_protocol(task, "pytorch", src, "withheld-test", "warn", "small")
    assert second["verdict"] == "runtime_error", second["evidence"]
    text = repr(second["evidence"]) + repr(second["feedback"]) + repr(second["warnings"])
    assert "LEAKED" not in text and WITHHELD in second["evidence"]["message"], text
