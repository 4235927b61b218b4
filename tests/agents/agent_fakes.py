"""Fakes for agent tests: a scripted provider, tree records, a backend stub."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from kstrata.store.records import (
    CandidateRecord,
    EvaluationRecord,
    ExpansionRecord,
    MeasurementRecord,
    Speedup,
)


@dataclass
class ScriptedProvider:
    """Answers each ``complete`` with the next scripted text; keeps the prompts."""

    answers: list[str]
    prompts: list[list[dict[str, str]]] = field(default_factory=list)
    label: str = "scripted"

    def complete(self, messages):
        self.prompts.append([dict(m) for m in messages])
        return SimpleNamespace(text=self.answers.pop(0), raw_finish_reason="stop")


class NoLog:
    def take(self):
        return []


def rec(h: str, level: str | None = None, parents: tuple[str, ...] = (), *, sources=None, metadata=None,
        verdict: str = "correct", feedback=(), findings=(), speedup: float | None = None, backend="tvm-llvm",
        expansion_id: int | None = None, rationale: str = "", shape: dict | None = None,
        created: float = 0.0) -> CandidateRecord:
    """A stored candidate ``h * 8`` with its evaluation (and a timing when ``speedup``)."""
    r = CandidateRecord(hash=h * 8, sources=dict(sources or {}), level=level, role=f"{level}-agent",
                        proposer="hierarchical", parents=tuple(p * 8 for p in parents), metadata=metadata or {},
                        status="evaluated", backend=backend, expansion_id=expansion_id, rationale=rationale,
                        created=created)
    r.evaluation = EvaluationRecord(verdict=verdict, feedback=list(feedback))
    if speedup is not None or findings:
        # as the evaluator stores it (search.evaluators._measurement_dict): the timings under "raw"
        raw = {"median_ms": 1.0, "raw": {"eager": {"labels": {"shape": shape}}}} if shape else None
        r.measurement = MeasurementRecord(median_ms=1.0, speedup=speedup, findings=list(findings), raw=raw,
                                          speedups=(Speedup("eager", speedup),) if speedup is not None else ())
    return r


def declined_expansion(candidate: str, level: str, role: str, diagnosis: str, requests, exp_id: int):
    """The expansion record the loop stores when ``propose`` raises Declined."""
    from kstrata.agents.router import Declined

    e = Declined(level, role, diagnosis, requests)
    error = f"{type(e).__name__}: {e}\nTraceback (most recent call last): ..."
    return ExpansionRecord(candidate=candidate * 8, level=level, proposer="hierarchical", error=error, id=exp_id)


def dumps(x: Any) -> str:
    return json.dumps(x)


class StubBackend:
    """A tvm-llvm backend as the agents see it, without lowering (no level context)."""

    name, levels = "tvm-llvm", ("graph", "schedule", "source")

    def level_context(self, task, sources, level):
        return {}


#: the texts of an initial TVM candidate (:class:`TVMStub`)
G0 = "# kstrata-tvm graph\n# build: symbolic\n# one operator\n"
S0 = "# kstrata-tvm schedule\n\n\ndef schedule(sch):\n    pass\n"


class TVMStub:
    """tvm-llvm as the agents see it: no lowering, a fixed structure per graph text."""

    name, levels = "tvm-llvm", ("graph", "schedule", "source")

    def __init__(self, structure):
        self.structure = structure  # graph text (or None: any) -> structure
        self.asked = 0

    def initial_sources(self, task):
        return {"graph": G0, "schedule": S0}

    def level_context(self, task, sources, level):
        return {}

    def level_structure(self, task, sources):
        self.asked += 1
        return self.structure.get(sources.get("graph"), self.structure.get(None))


class Log:
    """The calls a provider made since the last ``take`` (as :class:`kstrata.llm.CallLog` keeps them)."""

    def __init__(self):
        self.calls = []

    def take(self):
        out, self.calls = self.calls, []
        return out


class LoggedProvider(ScriptedProvider):
    log: Log = None

    def complete(self, messages):
        out = super().complete(messages)
        self.log.calls.append({"provider": "scripted", "prompt": messages[-1]["content"][:50], "response": out.text})
        return out
