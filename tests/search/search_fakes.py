"""In-test fakes: a synthetic two-level landscape with a known optimum (like
TVM's DummyRunner, no compiler or device involved)."""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field

from kstrata.agents.base import Proposal, ProposalBatch, ProposerCall

PEAK = {0: 2.0, 1: 4.0, 2: 1.0}  # best speedup per graph variant
OPT_LOG2_TILE = {0: 3, 1: 5, 2: 2}  # its best tile: 8, 32, 4
ORDER = {0: 0.8, 1: 1.0, 2: 0.9}
BEST = 4.0  # fuse=1, tile=32, order=1


def parse(sources: dict[str, str]) -> dict[str, int]:
    out = {}
    for text in sources.values():
        for line in text.splitlines():
            if "=" in line:
                k, v = line.split("=")
                out[k.strip()] = int(v)
    return out


def contended_finding(busy: float) -> str:
    """An untrusted-timing finding as the final round writes it for a timing
    the judge saw contended (``busy`` of 2 CPUs held by other processes)."""
    from kstrata.search.tree import UNTRUSTED_PREFIX

    return (f"{UNTRUSTED_PREFIX} contended: other processes kept {busy:.2f} of 2 CPUs busy during this timing, "
            "which used 2 thread(s); candidate and baseline were not timed alike in the final, longer timing round; "
            "not ranked as a speedup (`kstrata retime` re-times it on a quieter machine)")


def sources(fuse: int = 0, tile: int = 1, order: int = 0) -> dict[str, str]:
    return {"graph": f"fuse={fuse}\n", "schedule": f"tile={tile}\norder={order}\n"}


def speedup(fuse: int, tile: int, order: int) -> float:
    d = math.log2(tile) - OPT_LOG2_TILE[fuse]
    return PEAK[fuse] * math.exp(-d * d / 2) * ORDER[order]


@dataclass
class FakeBackend:
    name: str = "fake"
    levels: tuple[str, ...] = ("graph", "schedule")
    source_extensions: dict = field(default_factory=lambda: {"graph": "txt", "schedule": "txt"})

    def initial_sources(self, task):
        return sources()


@dataclass(frozen=True)
class FakeTask:
    name: str = "synthetic"
    digest: str = hashlib.sha256(b"synthetic").hexdigest()
    path: str = "synthetic.py"

    def full_shape(self, shape=None):
        return dict(shape or {})


class FakeEvaluator:
    """Deterministic verdicts and speedups; counts evaluations per source."""

    def __init__(self, delay: float = 0.0):
        self.delay = delay
        self.calls: list[dict[str, int]] = []

    def evaluate(self, task, backend, srcs):
        time.sleep(self.delay)
        p = parse(srcs)
        self.calls.append(p)
        if p["fuse"] == 2 and p["order"] == 2:
            return {"verdict": "compile_error", "evidence": {"log": "bad"}, "build_log": "error: bad"}, None
        if p["tile"] >= 64:
            return {"verdict": "incorrect", "check": "allclose", "feedback": [{"level": "schedule"}]}, None
        s = speedup(p["fuse"], p["tile"], p["order"])
        ev = {"verdict": "correct", "feedback": [], "n_public": 2, "n_hidden": 3}
        m = {
            "median_ms": 10.0 / s,
            "speedups": {"eager": {"value": s, "ci": [s * 0.95, s * 1.05]}, "tuned": s / 2},
            "roofline_fraction": s / 5.0,
            "bound": "memory" if p["fuse"] == 0 else "compute",
            "findings": [{"level": "schedule", "text": "tile more"}],
        }
        return ev, m


class FakeProposer:
    """Neighbours in the landscape: graph edits change ``fuse`` keeping the
    schedule, schedule edits double/halve ``tile`` or step ``order``."""

    name = "fake-rules"

    def __init__(self, tokens: int = 0, fail_steps: tuple[int, ...] = (), malformed_steps=()):
        self.tokens = tokens
        self.fail_steps = fail_steps
        self.malformed_steps = malformed_steps

    def propose(self, task, candidate, feedback, level, *, context):
        if context.step in self.fail_steps:
            raise RuntimeError("provider down")
        p = parse(candidate.sources)
        out = []
        if context.step in self.malformed_steps:
            out.append(Proposal(sources={"nonsense": "x"}, level=level, role="bad"))
        if level == "graph":
            for f in (p["fuse"] + 1, p["fuse"] - 1):
                if 0 <= f <= 2:
                    out.append(Proposal.edit(candidate.sources, "graph", f"fuse={f}\n", "graph-rules",
                                             rationale=f"fuse variant {f}"))
        else:
            variants = [(p["tile"] * 2, p["order"]), (p["tile"] // 2, p["order"]),
                        (p["tile"], p["order"] + 1), (p["tile"], p["order"] - 1)]
            for tile, order in variants:
                if 1 <= tile <= 64 and 0 <= order <= 2:
                    tclass = "small" if tile < 8 else "medium" if tile <= 16 else "large"
                    out.append(Proposal.edit(candidate.sources, "schedule", f"tile={tile}\norder={order}\n",
                                             "schedule-rules", rationale=f"tile {tile} order {order}",
                                             metadata={"tiling_class": tclass}))
        calls = []
        if self.tokens:
            calls.append(ProposerCall(provider="fake", model="m", prompt="p", response="r",
                                      tokens_in=self.tokens, tokens_out=self.tokens // 2, cost_usd=0.01))
        return ProposalBatch(out, calls)


class NoProposals:
    """A proposer that proposes nothing: the run evaluates its start only."""

    name = "none"

    def propose(self, task, candidate, feedback, level, *, context):
        return []


class ScreenOnly:
    """The search's screening (scope small) and nothing more: no timing, no confirmation."""

    def __init__(self, secret):
        self.secret = secret

    def evaluate(self, task, backend, sources):
        from kstrata.verify import verify_candidate

        return verify_candidate(task, backend.name, sources, secret=self.secret, scope="small"), None
