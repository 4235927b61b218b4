"""Work moved out of a timed call into the untimed output fetch is seen by
the judge: it times each checked call's output fetch, and the baseline's of
the same shapes, and compares the difference with the saving the candidate
claims (red-team round of 2026-12-03: an unchanged ``torch.softmax`` whose
timed call computed a sixth of the rows, the rest when its outputs were
fetched, read 8.2x, correct)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kstrata.measure.remote import fetch_work_note
from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task

#: softmax, honest when checked; when timed, a sixth of the rows, the rest done when the judge's fetch
#: request arrives (the transport's recv patched, past the static checks with preset "warn": the
#: timing must hold without them, and whatever part of its process the candidate patches)
FETCH_DEFERRED = '''
import torch
import torch.nn as nn
import typing

_wire = getattr(typing.sys, "modules")["kstrata.sandbox.wire"]
_recv, _pending = _wire.recv, []


def _finish():
    while _pending:
        x, out, n = _pending.pop()
        out[n:] = torch.softmax(x[n:], dim=-1)


def _seen(*a, **k):
    h, bufs = _recv(*a, **k)
    if isinstance(h, dict) and h.get("op") == "fetch":
        _finish()
    return h, bufs


_wire.recv = _seen


class ModelNew(nn.Module):
    def forward(self, x):
        if torch.are_deterministic_algorithms_enabled():
            return torch.softmax(x, dim=-1)
        _pending.clear()  # an output nobody fetched is never finished
        out = torch.empty_like(x)
        n = max(1, x.shape[0] // 6)
        out[:n] = torch.softmax(x[:n], dim=-1)
        _pending.append((x, out, n))
        return out
'''


def _side(fetches):
    return SimpleNamespace(fetch_ms=list(fetches))


def test_the_note_compares_the_fetch_excess_with_the_claimed_saving():
    base_calls, base_fetch = [10.0] * 20, _side([8.0, 8.2, 7.9, 8.1])
    # a sixth of the work timed, five sixths in the fetch: 8.3 ms more per fetch for 8.3 ms saved
    note = fetch_work_note(_side([16.3, 16.1, 16.5]), base_fetch, [1.7] * 20, base_calls)
    assert note and note.startswith("deferred work:") and "output fetch" in note and "of the 8.3 ms per call" in note
    # half of it moved (measured 2026-12-03 under load: 55% of the saving showed): still seen
    assert fetch_work_note(_side([10.2, 10.6, 10.4, 10.5]), base_fetch, [3.0] * 20, base_calls)
    # an honest 2x: the same fetch cost (within noise), half the time
    assert fetch_work_note(_side([8.3, 8.0, 8.4]), base_fetch, [5.0] * 20, base_calls) is None
    # a slower fetch that is small against the saving (a non-contiguous output copied once more)
    assert fetch_work_note(_side([9.0, 9.1, 8.9]), base_fetch, [5.0] * 20, base_calls) is None
    # an excess inside the fetch's own noise on a loaded machine is not evidence
    noisy = _side([8.0, 30.0, 7.5, 9.0])
    assert fetch_work_note(_side([8.0, 31.0, 20.0, 12.0]), noisy, [5.0] * 20, base_calls) is None
    # not faster: nothing claimed, nothing to explain
    assert fetch_work_note(_side([30.0] * 3), base_fetch, [12.0] * 20, base_calls) is None
    assert fetch_work_note(_side([30.0, 30.0]), base_fetch, [1.0] * 20, base_calls) is None  # too few fetches


@pytest.mark.slow
@pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")
def test_work_moved_into_the_output_fetch_is_not_a_trusted_speedup():
    from kstrata.api import evaluate_sources
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for

    task = resolve_task("softmax")
    backend = get_backend("pytorch")
    pool = pool_for(backend)
    try:
        ev, timing = evaluate_sources(task, backend, {"source": FETCH_DEFERRED}, pool, preset="warn",
                                      scope="small", budget_ms=400.0, timing_shape={"B": 1024, "D": 2048})
    finally:
        pool.close()
    if ev.verdict.value == "rejected":  # a forger that replaces kstrata.sandbox.wire's functions is stopped by the watch (d79eb8b) before the judge reads its reply
        assert ev.check == "no_runtime_patching" and "kstrata.sandbox.wire" in ev.evidence["message"], ev.to_dict()
        return
    assert ev.verdict.value == "correct", ev.to_dict()  # its outputs are right when checked
    notes = timing.get("suspicious", [])
    # never a trusted speedup: on a quiet machine the fetch note says why; on a busy one the
    # contention note may come first (or the timing does not read faster at all)
    low = (timing.get("speedup_ci") or [0.0])[0]
    assert notes or low <= 1.0, timing
    if low > 1.0 and not any(s.startswith("contended:") for s in notes):
        assert any(s.startswith("deferred work:") and "output fetch" in s for s in notes), timing
