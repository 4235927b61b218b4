"""A single-threaded backend's candidate process is loaded with one intra-op
thread whatever the judge uses for its own calls.

The judge counts a ``triton-interp`` candidate process's threads from outside
(``kstrata.sandbox.client.Churn.threads``): its honest processes run one. At a
large hidden test on an idle machine the judge took two threads for its calls
(:func:`kstrata.verify.runner.check_threads`) and told the candidate process
to take two as well; torch's pool then started a thread at the candidate's
first large call, and the shipped Triton gemv was rejected ``no_threads_left``
(``kstrata eval gemv src/kstrata/kernels/triton/gemv.py --backend triton-interp``).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from kstrata.backends.registry import get_backend
from kstrata.tasks.loader import resolve_task
from kstrata.verify import runner


@pytest.mark.parametrize("backend,want", [("triton-interp", 1), ("pytorch", 2)])
def test_the_load_request_asks_one_thread_of_a_single_threaded_backend(monkeypatch, backend, want):
    monkeypatch.setattr(runner, "check_threads", lambda *a, **k: 2)  # a large test on an idle machine
    sent: list[dict] = []

    def request(header, bufs, public):
        sent.append(header)
        return {"ok": True, "load_s": 0.01, "findings": []}, []

    ctx = SimpleNamespace(task=resolve_task("gemv"), backend=get_backend(backend), backend_name=backend,
                          sources={"source": "# not loaded here"}, threads=2, request=request,
                          load_seconds=0.0, fire_all=lambda findings, public: None)
    before = torch.get_num_threads()
    try:
        run = runner.ShapeRun(ctx, {"M": 64, "K": 64}, 0)
    finally:
        torch.set_num_threads(before)
    assert run.threads == 2  # the judge's own reference and oracle calls keep two
    assert [h["op"] for h in sent] == ["load"] and sent[0]["threads"] == want
