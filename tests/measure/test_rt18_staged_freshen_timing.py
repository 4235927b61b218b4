"""Issue #18: the candidate process freshens a reused timing copy from the values
it was staged (it keeps a clone of each copy), so the judge replays any checked
call's inputs in one pass instead of every freshen the copy had. The guarantees
of :mod:`kstrata.measure.freshen` hold through a real sandboxed timing: an honest
candidate's freshened inputs come back bit for bit as the judge replays them, a
memo keyed on the copy's buffer is caught, and a candidate that rewrites the
kept staged values (to make the next freshens cheap to answer) is caught too."""

from __future__ import annotations

import pytest

from kstrata.backends.pytorch import PyTorchBackend
from kstrata.measure.candidate import time_candidate
from kstrata.measure.remote import TimedOutputMismatch
from kstrata.measure.timing import TimingConfig
from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task

pytestmark = pytest.mark.skipif(not status().usable, reason="no sandbox here")

#: three copies, each reused many times: freshened copies are checked (check_last makes sure of one)
REUSED = TimingConfig(budget_ms=40, min_reps=24, max_reps=40, warmup_ms=2, flush_bytes=1 << 20,
                      max_remeasure=0, input_copies=3)
SHAPE = {"B": 16, "D": 256}

def _sources(task, forward: str) -> dict[str, str]:
    src = PyTorchBackend().initial_sources(task)["source"]
    return {"source": src.replace("class ModelNew(Model):\n    pass\n", forward)}


def test_honest_candidate_reads_the_freshened_inputs_the_judge_replays():
    task = resolve_task("rmsnorm")
    m = time_candidate("pytorch", task, PyTorchBackend().initial_sources(task), SHAPE, config=REUSED,
                       with_roofline=False)
    # every checked call's inputs came back as the judge replayed them (else "modified input"), on
    # copies reused up to ~16 times each
    assert m.reps >= 24 and m.input_copies == 3
    assert m.flush["timed_calls_checked"] >= 2


def test_memo_keyed_on_the_copy_is_caught():
    task = resolve_task("rmsnorm")
    forward = '''class ModelNew(Model):
    _memo = {}

    def forward(self, x):
        key = x.data_ptr()
        if key not in self._memo:
            self._memo[key] = super().forward(x)
        return self._memo[key].clone()
'''
    with pytest.raises(TimedOutputMismatch, match="wrong output"):
        time_candidate("pytorch", task, _sources(task, forward), SHAPE, config=REUSED, with_roofline=False)


def test_rewriting_the_kept_staged_values_is_caught():
    """The candidate finds the tensor holding its copy's staged values (a clone of
    exactly its storage's size with the values of a copy's first use; the copies
    themselves sit in larger, red-zoned buffers) and zeroes it: every later freshen
    of that copy would then write zeros, whose output it could return at once. The
    judge replays from its own staged values, so the first checked call on that
    copy freshened sees inputs the judge did not send."""
    task = resolve_task("rmsnorm")
    forward = '''class ModelNew(Model):
    def forward(self, x):
        import gc
        for o in gc.get_objects():
            if (type(o) is torch.Tensor and o is not x and o.shape == x.shape and o.dtype == x.dtype
                    and o.untyped_storage().nbytes() == o.numel() * o.element_size()
                    and o.data_ptr() != x.data_ptr() and torch.equal(o, x)):
                o.zero_()
        return super().forward(x)
'''
    with pytest.raises(TimedOutputMismatch, match="modified input"):
        time_candidate("pytorch", task, _sources(task, forward), SHAPE, config=REUSED, with_roofline=False)
