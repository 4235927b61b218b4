"""The candidate's process cannot tell when the judge stops comparing timed
calls (red-team rt52). The judge compares at most ``MAX_FRESH_CHECKS`` calls
on freshened copies with their oracle (each needs one), and it stopped
fetching after them: a candidate that counted the fetches (through a tensor
method the fetch calls) knew that only the last call would be fetched, did
40% of a softmax in each later timed call and the rest only when a fetch
came, so a single slow fetch left the fetches' median (``fetch_work_note``)
alone. Calls drawn after those checks are now fetched all the same, outputs
and inputs, without the comparison."""

from __future__ import annotations

import random

from kstrata.measure import remote
from kstrata.measure.remote import RemoteCandidate


class _Proc:
    """A candidate process that answers fetches and counts them."""

    def __init__(self):
        self.fetches: list[dict] = []

    def ok(self, h, bufs=None):
        if h.get("op") == "fetch":
            self.fetches.append(dict(h))
        return {"ok": True, "outputs": [], "inputs": [], "findings": []}, []


def _timed_calls(cand: RemoteCandidate, n: int) -> None:
    """``n`` timed calls on three copies, each reused (freshened) after its first use."""
    cand.uses, cand.seeds, cand.staged = [0, 0, 0], [[], [], []], [[], [], []]
    for k in range(n):
        i = k % 3
        if cand.uses[i]:
            cand.seeds[i].append(random.randrange(1 << 40))
        cand.uses[i] += 1
        cand.after_call(i)


def test_fetches_go_on_after_the_last_affordable_check():
    proc = _Proc()
    compared = []
    cand = RemoteCandidate(proc, check=lambda i, outs, inputs, strides, **k: compared.append(i), seed=3)
    _timed_calls(cand, 600)
    outputs = [h for h in proc.fetches if h.get("outputs", True)]
    # the first call, the unfreshened copies' draws and MAX_FRESH_CHECKS freshened ones are compared ...
    assert len(compared) <= 1 + 3 + remote.MAX_FRESH_CHECKS
    # ... but calls go on being fetched at CHECK_SHARE to the end (about 60 of 600), outputs then inputs
    assert len(outputs) >= 30, len(outputs)
    assert len(proc.fetches) == 2 * len(outputs)
    assert cand.fresh_checks == remote.MAX_FRESH_CHECKS


def test_a_finding_in_a_fetch_that_is_not_compared_still_rejects():
    class Tampered(_Proc):
        def ok(self, h, bufs=None):
            h2, b = super().ok(h, bufs)
            if h.get("op") == "fetch" and len(self.fetches) > 40:
                h2["findings"] = [{"check": "no_runtime_patching", "message": "candidate replaced x"}]
            return h2, b

    cand = RemoteCandidate(Tampered(), check=lambda *a, **k: None, seed=3)
    try:
        _timed_calls(cand, 2000)
    except remote.TimedOutputMismatch as e:
        assert "no_runtime_patching" in str(e)
    else:
        raise AssertionError("the finding in a later fetch was not seen")
