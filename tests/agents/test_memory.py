"""Agent memory: the skill store (SQLite), similarity retrieval, JSON-lines
export/import (validated, all or nothing), the CLI, learning from a run, and
the short-term memory of refused and tried edits."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from kstrata.agents.base import Proposal
from kstrata.agents.hierarchical import HierarchicalProposer
from kstrata.agents.memory import MemoryFileError, MemoryStore, Skill, jaccard, tokens
from kstrata.search.budget import Budget
from kstrata.search.loop import optimize


def skill(**kw):
    base = dict(backend="tvm-llvm", level="schedule", before="def schedule(sch):\n    pass\n",
                after="def schedule_f(sch):\n    sch.parallel(l)\n", speedup=2.0, task="t",
                category="fusion", search_text="fusion matmul add relu")
    return Skill(**{**base, **kw})


def test_store_similarity_and_dedup(tmp_path):
    with MemoryStore(tmp_path / "m.db") as m:
        a = m.add_skill(skill())
        assert m.add_skill(skill()) is None  # same transformation once
        m.add_skill(skill(after="x\n", category="softmax", search_text="softmax exp max sum", speedup=3.0))
        t = m.add_skill(skill(after="y\n", backend="triton", level="source", search_text="fusion matmul relu"))
        assert [s.speedup for s in m.skills()] == [3.0, 2.0, 2.0]
        assert "+    sch.parallel(l)" in m.skill(a).diff
        hits = m.similar("fusion linear matmul relu", category="fusion", backend="tvm-llvm", level="schedule")
        assert [h[1].id for h in hits][:2] == [a, t] and hits[0][0] > hits[1][0]
        assert m.similar("softmax", category="softmax")[0][1].category == "softmax"
        with pytest.raises(KeyError):
            m.skill(99)
    assert jaccard(tokens("fused_matmul"), tokens("matmul")) == pytest.approx(1 / 3)


def test_import_validates_every_line_before_writing(tmp_path):
    src = MemoryStore(tmp_path / "a.db")
    src.add_skill(skill())
    src.add_skill(skill(after="z\n", speedup=1.5))
    lines = []
    src.export_jsonl(type("W", (), {"write": lambda self, t: lines.append(t)})())
    dst = MemoryStore(tmp_path / "b.db")
    bad = [*lines, json.dumps({**json.loads(lines[0]), "level": "kernel"}) + "\n"]
    with pytest.raises(MemoryFileError, match="line 3: level 'kernel'"):
        dst.import_jsonl(bad)
    assert dst.skills() == []  # nothing written
    with pytest.raises(MemoryFileError, match="line 1: unknown key"):
        dst.import_jsonl([json.dumps({**json.loads(lines[0]), "tiles": 4})])
    with pytest.raises(MemoryFileError, match="line 1: not JSON"):
        dst.import_jsonl(["{"])
    assert dst.import_jsonl(lines) == (2, 0) and dst.import_jsonl(lines) == (0, 2)
    assert {s.after for s in dst.skills()} == {s.after for s in src.skills()}


def test_memory_cli(tmp_path):
    from kstrata.cli.main import app

    db = tmp_path / "m.db"
    MemoryStore(db).add_skill(skill(description="parallel rows of the fused GEMM"))
    run = CliRunner()
    env = {"COLUMNS": "200", "KSTRATA_MEMORY_DB": str(db)}
    out = run.invoke(app, ["memory", "list"], env=env)
    assert out.exit_code == 0 and "parallel rows" in out.output and "1 skill(s)" in out.output
    out = run.invoke(app, ["memory", "show", "1"], env=env)
    assert out.exit_code == 0 and "sch.parallel(l)" in out.output and "2x over its parent" in out.output
    assert run.invoke(app, ["memory", "show", "7"], env=env).exit_code == 2
    assert run.invoke(app, ["memory", "export", str(tmp_path / "e.jsonl")], env=env).exit_code == 0
    other = tmp_path / "o.db"
    out = run.invoke(app, ["memory", "import", str(tmp_path / "e.jsonl"), "--db", str(other)])
    assert out.exit_code == 0 and "imported 1 skill(s)" in out.output
    (tmp_path / "bad.jsonl").write_text('{"backend": "x"}\n')
    out = run.invoke(app, ["memory", "import", str(tmp_path / "bad.jsonl"), "--db", str(other)], env=env)
    text = " ".join(out.output.split())
    assert out.exit_code == 2 and "missing key 'level'" in text and "nothing imported" in text
    out = run.invoke(app, ["memory", "list", "--db", str(tmp_path / "none.db")])
    assert out.exit_code == 2 and "no memory database" in out.output


# -- a tiny two-level landscape: learning and short-term memory through the loop --------
@dataclass
class Backend:
    name: str = "fake"
    levels: tuple = ("graph", "schedule")

    def initial_sources(self, task):
        return {"graph": "fuse=0\n", "schedule": "tile=1\n"}


@dataclass(frozen=True)
class Task:
    name: str = "toy"
    digest: str = hashlib.sha256(b"toy").hexdigest()
    path: str = "toy.py"
    source: str = "class Model:\n    def forward(self, x):\n        return torch.relu(x @ x)\n"


def _val(text):
    return int(text.split("=")[1])


class Evaluator:
    def evaluate(self, task, backend, s):
        v = 1.0 + _val(s["graph"]) + 0.5 * _val(s["schedule"])
        return {"verdict": "correct", "feedback": []}, {"median_ms": 1 / v, "speedups": {"eager": v}}


class ScheduleRole:
    """Proposes tile+1, and an out-of-scope edit that also changes the graph."""

    name = "sched"

    def propose(self, task, cand, feedback, level, *, context):
        t = _val(cand.sources["schedule"])
        good = Proposal.edit(cand.sources, "schedule", f"tile={t + 1}\n", role="schedule-agent",
                             rationale=f"tile {t + 1}")
        bad = Proposal(sources={"graph": "fuse=9\n", "schedule": "tile=9\n"}, level="schedule",
                       role="schedule-agent", rationale="sneaky graph change")
        return [good, bad]


class GraphRole:
    name = "graph"

    def propose(self, task, cand, feedback, level, *, context):
        return [Proposal.edit(cand.sources, "graph", "fuse=1\n", role="graph-agent", rationale="fuse")]


def test_learning_and_short_term_memory_through_the_loop(tmp_path):
    mem = MemoryStore(tmp_path / "m.db")
    prop = HierarchicalProposer(Backend(), agents={"schedule": ScheduleRole(), "graph": GraphRole()}, memory=mem)
    res = optimize(Task(), Backend(), prop, Evaluator(), policy="greedy", budget=Budget(evaluations=5),
                   run_dir=tmp_path / "run", router=prop.router)
    prop.learn(res.tree)
    nodes = list(res.tree)
    # the graph-changing schedule proposal was refused and recorded, never evaluated
    assert not any(n.record.metadata.get("replay") for n in nodes)
    refused = [n for n in nodes if n.record.metadata.get("refused")]
    assert refused and "changed the graph level" in refused[0].record.metadata["refused"][0]
    assert prop.refusals and all(r["role"] == "schedule-agent" for r in prop.refusals)
    assert not any("fuse=9" in str(n.record.rationale) for n in nodes)
    # skills: every accepted edit beat its parent, so each was learned once
    skills = mem.skills()
    assert skills and {s.level for s in skills} <= {"graph", "schedule"}
    assert all(s.speedup > 1 and s.task == "toy" and s.before and s.after for s in skills)
    assert prop.learn(res.tree) == []  # once only
    # short-term memory: the prompt history of the root names the children and the refusal
    key = prop.run_key(Task(), type("C", (), {"backend": "fake", "seed": 0, "tree": res.tree})())
    hist = prop.history(key, res.tree, res.tree[refused[0].parents[0]], "schedule")
    assert any("correct" in h for h in hist) and any("refused" in h for h in hist)
    # no-memory ablation: nothing in prompts, nothing stored
    off = HierarchicalProposer(Backend(), agents={"schedule": ScheduleRole()}, memory=mem, ablations="no-memory")
    assert off.history(key, res.tree, res.tree.root, "schedule") == () and off.learn(res.tree) == []


def test_a_router_naming_a_level_the_policy_closed_does_not_loop_forever(tmp_path):
    """With the node's schedule closed (written there, nothing new) and its graph
    at the policy's limit, the hierarchical router fell back to graph every time,
    the graph role's answer was a duplicate, and the search never ended. A level
    at the policy's limit is never asked: the loop asks an offered level."""
    calls = []

    def graph_forever(tree, node, levels, preference):
        calls.append(list(levels))
        return "graph", "always graph"

    prop = HierarchicalProposer(Backend(), agents={"schedule": ScheduleRole(), "graph": GraphRole()}, memory=None)
    res = optimize(Task(), Backend(), prop, Evaluator(), policy="greedy", budget=Budget(evaluations=50),
                   run_dir=tmp_path / "run", router=graph_forever)
    assert calls and res.stop_reason  # it ended (before the fix: never)
    logged = [(e.candidate, e.level) for e in res.tree.expansion_log]
    assert all(n <= 1 for n in (logged.count(x) for x in set(logged)))  # no (node, level) asked twice
    assert any("at the policy's limit" in (e.router_reason or "") for e in res.tree.expansion_log)
