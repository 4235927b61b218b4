"""A deterministic proposer and a quick real evaluator for bench/report tests.

``EditProposer`` edits the ``pytorch`` backend's candidate (``class
ModelNew(Model)``) in fixed ways: a correct edit (an equivalent ``forward``
that calls the reference), an incorrect one (adds 1 to the output) and one
that does not parse. ``QuickEvaluator`` is the real verifier (small hidden
scope, a shared worker pool) followed by the real paired timer with a short
timing budget, at the bench's timing shape: :func:`make_bench` times at
:data:`TIMING_SHAPE` (relu's and sigmoid's nominal 4096 x 4096 costs about a
minute per evaluation on a busy 2-core machine; what these tests check does
not depend on the size).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from kstrata.agents.base import Proposal, ProposalBatch, ProposerCall
from kstrata.measure.timing import TimingConfig

EDITS = {
    "same": "\n\nclass ModelNew(ModelNew):\n    def forward(self, *args):  # edit {i}\n"
            "        return super().forward(*args)\n",
    "plus_one": "\n\nclass ModelNew(ModelNew):\n    def forward(self, *args):  # edit {i}\n"
                "        return super().forward(*args) + 1.0\n",
    "syntax": "\n\nclass ModelNew(ModelNew:  # edit {i}\n    pass\n",
}


class EditProposer:
    """Proposes ``edits`` (keys of :data:`EDITS`) of the parent's source, in order;
    reports one fake model call per propose (for the token ledger)."""

    def __init__(self, name: str = "edits", edits: tuple[str, ...] = ("same", "plus_one")):
        self.name, self.edits = name, edits

    def propose(self, task, candidate, feedback, level, *, context):
        src = candidate.sources["source"]
        props = [Proposal.edit(candidate.sources, level, src + EDITS[e].format(i=context.step),
                               role=f"test-{e}", rationale=f"fixed edit {e!r}")
                 for e in self.edits]
        call = ProposerCall(provider="test", model="fixed", prompt="p", response="r",
                            tokens_in=10, tokens_out=5)
        return ProposalBatch(props, [call])


QUICK_TIMING = TimingConfig(warmup_ms=5, budget_ms=40, min_reps=5, max_reps=50,
                            max_remeasure=0, n_resamples=200)


@dataclass
class QuickEvaluator:
    """Real verification (``scope="small"``) and real timing (short budget)."""

    secret: str
    pool: Any = None
    baselines: tuple[str, ...] = ("eager",)
    shape: dict[str, int] | None = None

    def evaluate(self, task: Any, backend: Any, sources: dict[str, str]) -> tuple[Any, Any]:
        from kstrata.measure.candidate import time_candidate
        from kstrata.verify import verify_candidate

        ev = verify_candidate(task, backend.name, sources, secret=self.secret, pool=self.pool,
                              scope="small", timeout_s=120)
        if not ev.correct:
            return ev, None
        speedups, first = {}, None
        for b in self.baselines:
            m = time_candidate(backend.name, task, sources, self.shape, baseline=b, config=QUICK_TIMING)
            first = first or m
            speedups[b] = m.speedup
        pos = (first.roofline or {}).get("candidate") or {}
        return ev, {"median_ms": first.candidate.median, "speedups": speedups,
                    "roofline_fraction": pos.get("fraction"), "bound": pos.get("bound"),
                    "raw": {self.baselines[0]: first.to_dict()}}


def quick_evaluator(spec, backend, secret, pool, shape=None):
    return QuickEvaluator(secret=secret, pool=pool, baselines=tuple(spec.baselines), shape=shape)


#: the bench's ``timing_shape`` in :func:`make_bench` (relu's and sigmoid's variables)
TIMING_SHAPE = "B=64,D=512"


PROPOSERS = {
    "edits": lambda: EditProposer("edits", ("same", "plus_one")),
    "broken": lambda backend: EditProposer("broken", ("syntax",)),
}


def make_bench(path, tasks=("relu", "sigmoid"), proposers=("edits", "broken"), evals=3,
               resume=False, evaluator_factory=quick_evaluator, progress=None):
    """Run (or resume) a small real bench on the ``pytorch`` backend."""
    from kstrata.bench.harness import BenchSpec, parse_budget, run_bench

    spec = BenchSpec(suite="all", backends=("pytorch",), proposers=tuple(proposers),
                     budget=parse_budget(f"evals={evals}").to_dict(), tasks=tuple(tasks),
                     timing_shape=TIMING_SHAPE)
    return run_bench(spec, path, resume=resume, proposers=PROPOSERS,
                     evaluator_factory=evaluator_factory, progress=progress)


#: the CPU ceilings (``roofline.json`` entries) this test process measured in an isolated cache:
#: measuring them takes 3-8 s on the 2-core machine (two 1 GiB copy buffers and a 2048^2 matmul),
#: and every test with an empty cache that timed a candidate paid it again
_CEILINGS: dict[str, dict] = {}


def seed_ceilings(cache_dir) -> None:
    """Write the ceilings this process already measured into ``cache_dir``'s
    ``roofline.json`` (as a warm kstrata cache holds them), unless it has one.
    What a test checks of a timing does not depend on which run measured the
    ceilings; tests of the measurement itself (``tests/measure/test_roofline.py``)
    pass their own ``path``."""
    from pathlib import Path

    path = Path(cache_dir) / "roofline.json"
    if _CEILINGS and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_CEILINGS, indent=1, sort_keys=True))


def keep_ceilings(cache_dir) -> None:
    """Remember the measured entries of ``cache_dir``'s ``roofline.json`` for
    :func:`seed_ceilings`; entries a baseline raised (``method`` says
    ``raised``) are left out, so each test starts from measured ceilings."""
    from pathlib import Path

    try:
        data = json.loads((Path(cache_dir) / "roofline.json").read_text())
    except (OSError, ValueError):
        return
    for key, entry in data.items():
        if isinstance(entry, dict) and "raised" not in str(entry.get("method", "")):
            _CEILINGS.setdefault(key, entry)


def isolated_env(cache_dir):
    """Context manager: ``KSTRATA_CACHE_DIR`` in ``cache_dir`` (seeded with this
    process's measured ceilings, :func:`seed_ceilings`); thread settings restored."""
    import contextlib

    import torch

    from kstrata.measure.environment import THREAD_ENV

    @contextlib.contextmanager
    def ctx():
        keys = ("KSTRATA_CACHE_DIR", *THREAD_ENV)
        saved = {k: os.environ.get(k) for k in keys}
        threads = torch.get_num_threads()
        os.environ["KSTRATA_CACHE_DIR"] = str(cache_dir)
        seed_ceilings(cache_dir)
        try:
            yield
        finally:
            keep_ceilings(cache_dir)
            torch.set_num_threads(threads)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    return ctx()


RELU_NEW = '''import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
'''


class CorrectUntimed:
    """Stands in for the verifier: every candidate correct, none timed (as an interpreter's run)."""

    def evaluate(self, task, backend, sources):
        return {"verdict": "correct", "feedback": []}, None


class NoProposer:
    """Proposes nothing: a run of its start alone."""

    name = "none"

    def propose(self, *a, **k):
        return []


def untimed_relu_run(run_dir, evals: int = 1, resume: bool = False):
    """A pytorch ``relu`` run of :data:`RELU_NEW` alone, judged by :class:`CorrectUntimed`
    (a second, quick stand-in for a real run: what the views say of it is the test)."""
    import kstrata
    from kstrata.backends.registry import get_backend
    from kstrata.search import Budget, optimize

    return optimize(kstrata.load_task("relu"), get_backend("pytorch"), NoProposer(), CorrectUntimed(), "greedy",
                    Budget(evaluations=evals), run_dir, initial_sources={"source": RELU_NEW}, resume=resume)
