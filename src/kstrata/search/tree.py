"""The candidate tree: every version with its lineage, built from a run store.

Nodes are candidates; edges go from each parent to its children (a candidate
may have several parents; the first is the one it is drawn under). The tree
is a read model: it is rebuilt from the store, so a resumed run sees exactly
what an uninterrupted one would.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from rich.tree import Tree

from kstrata.store.records import CandidateRecord, ExpansionRecord, MeasurementRecord
from kstrata.store.run_store import RunStore


#: A measurement finding starting with this marks a timing the search does not rank by.
UNTRUSTED_PREFIX = "untrusted timing:"
#: An expansion error starting with this records a decline (JSON after it; see :meth:`CandidateTree.declines`).
DECLINED_PREFIX = "Declined: "


def untrusted_findings(findings: Any) -> list[str]:
    """The findings (a measurement's, in order) that mark its timing untrusted
    (:data:`UNTRUSTED_PREFIX`); empty for a trusted timing."""
    return [f for f in findings if isinstance(f, str) and f.startswith(UNTRUSTED_PREFIX)]


def unevaluated(finished: bool) -> str:
    """How a candidate that was proposed but never evaluated is shown (the tree,
    the report): in a stopped run the budget ran out before it was reached."""
    return "not evaluated (the run stopped first)" if finished else "not evaluated yet"

@dataclass
class Node:
    """One candidate in the tree (its stored record plus links)."""

    record: CandidateRecord
    children: list[str] = field(default_factory=list)
    #: expansions of this node per level (how often a proposer was asked)
    expansions: Counter = field(default_factory=Counter)

    def __getattr__(self, name: str) -> Any:  # hash, sources, level, role, ...
        if name == "record":
            raise AttributeError(name)
        return getattr(self.record, name)

    @property
    def evaluated(self) -> bool:
        return self.record.status == "evaluated"

    @property
    def verdict(self) -> str | None:
        ev = self.record.evaluation
        return None if ev is None else ev.verdict

    @property
    def correct(self) -> bool:
        return self.verdict == "correct"

    @property
    def timing_failure(self) -> str | None:
        """Why a correct candidate has no timing where its timing failed (the
        evaluation's ``evidence["not_timed"]``: a timing worker killed for
        memory or at its time limit), else ``None``."""
        ev = self.record.evaluation
        why = ev.evidence.get("not_timed") if ev is not None and isinstance(ev.evidence, dict) else None
        return str(why) if why else None

    @property
    def reduced_scope(self) -> str | None:
        """For a correct candidate the search verified at a reduced scope only
        (``--scope small``: some of the task's sweep shapes untested, and no
        full-scope confirmation since), what that scope left out (the
        verifier's ``evidence["scope"]``); ``None`` for a candidate verified at
        the full scope, confirmed there, or not correct. Such a candidate is
        not known to be correct at the shapes left out (newcomer nc18: a row
        tail bug at B=127 passed the search's screening, was called correct
        everywhere and exported)."""
        ev = self.record.evaluation
        if not self.correct or ev is None or not isinstance(ev.evidence, dict):
            return None
        scope = ev.evidence.get("scope")
        return str(scope) if scope and not ev.evidence.get("confirmed") else None

    @property
    def speedup(self) -> float | None:
        """Speedup against the primary baseline; ``None`` unless correct and timed."""
        m = self.record.measurement
        return m.speedup if self.correct and m is not None else None

    @property
    def timing_trusted(self) -> bool:
        """False when the evaluator could not get a believable timing (still
        noisy or under the roofline floor after re-timing; see
        :data:`UNTRUSTED_PREFIX`)."""
        m = self.record.measurement
        return m is None or not untrusted_findings(m.findings)

    @property
    def timing_contended(self) -> bool:
        """Whether the timing is untrusted because other processes kept the
        CPUs busy while it ran (the judge's ``contended:`` note,
        :func:`kstrata.measure.contention.read_note`): candidate and baseline
        were not timed alike, so its reading says nothing, in either direction."""
        from kstrata.measure.contention import read_note

        m = self.record.measurement
        return m is not None and any(read_note(f) for f in untrusted_findings(m.findings))

    def keeps_reading(self, new: MeasurementRecord) -> bool:
        """Whether a re-timing of this node (``kstrata retime``, the end-of-run
        round) measured as ``new`` must leave the stored reading in place: an
        untrusted re-timing (:data:`UNTRUSTED_PREFIX`, e.g. a busy machine)
        never replaces a trusted reading, so it cannot cost a run its ranked
        best (newcomer nc16: a contended 1.68x replaced the best's trusted
        1.16x and the run claimed nothing)."""
        return bool(untrusted_findings(new.findings)) and self.measurement is not None and self.timing_trusted

    @property
    def score(self) -> float:
        """Ranking key: speedup, ``0`` for a correct node untimed or with an
        untrusted timing, ``-1`` otherwise."""
        if not self.correct:
            return -1.0
        if not self.timing_trusted:
            return 0.0
        return self.speedup if self.speedup is not None else 0.0

    @property
    def roofline_fraction(self) -> float | None:
        m = self.record.measurement
        return None if m is None else m.roofline_fraction

    @property
    def bound(self) -> str | None:
        """``memory``/``compute`` from the measurement, else from the metadata."""
        m = self.record.measurement
        return (m.bound if m is not None else None) or self.record.metadata.get("bound")

    def feedback(self) -> dict[str, Any]:
        """What a proposer is told about this node (JSON data)."""
        ev, m = self.record.evaluation, self.record.measurement
        out: dict[str, Any] = {"verdict": self.verdict}
        if ev is not None:
            out["check"] = ev.check
            out["evaluation"] = ev.feedback
        if m is not None:
            out["measurement"] = {
                "median_ms": m.median_ms,
                "speedups": [s.__dict__ for s in m.speedups],
                "roofline_fraction": m.roofline_fraction,
                "bound": m.bound,
                "findings": m.findings,
            }
        return out


#: ``evidence`` key of a screening verdict whose full-scope confirmation timed out
#: (:func:`kstrata.search.loop.confirm_one`: kept, the timeout noted, since a timeout is no wrong answer)
CONFIRMATION_TIMEOUT = "full_scope_timeout"

class CandidateTree:
    """All candidates of a run with lineage and query helpers."""

    def __init__(self, records: list[CandidateRecord], expansions: list[ExpansionRecord] = ()):
        self.nodes: dict[str, Node] = {r.hash: Node(r) for r in records}
        self.expansion_log: list[ExpansionRecord] = list(expansions)
        for node in self.nodes.values():
            for parent in node.parents:
                self.nodes[parent].children.append(node.hash)
        for exp in self.expansion_log:
            self.nodes[exp.candidate].expansions[exp.level] += 1

    @classmethod
    def from_store(cls, store: RunStore, with_sources: bool = True) -> CandidateTree:
        return cls(store.candidates(with_sources=with_sources), store.expansions())

    # -- navigation --------------------------------------------------------
    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes.values())

    def __getitem__(self, digest: str) -> Node:
        return self.nodes[digest]

    @property
    def root(self) -> Node | None:
        return next(iter(self.nodes.values()), None)

    def children(self, digest: str) -> list[Node]:
        return [self.nodes[c] for c in self.nodes[digest].children]

    def parents(self, digest: str) -> list[Node]:
        return [self.nodes[p] for p in self.nodes[digest].parents]

    def path_to_root(self, digest: str) -> list[Node]:
        """``digest``'s node, its first parent, …, the root."""
        path = [self.nodes[digest]]
        while path[-1].parents:
            path.append(self.nodes[path[-1].parents[0]])
        return path

    def ancestors(self, digest: str) -> set[str]:
        """Every strict ancestor through any parent."""
        seen: set[str] = set()
        stack = list(self.nodes[digest].parents)
        while stack:
            h = stack.pop()
            if h not in seen:
                seen.add(h)
                stack.extend(self.nodes[h].parents)
        return seen

    def depth(self, digest: str) -> int:
        return self.nodes[digest].depth

    def subtree(self, digest: str) -> list[Node]:
        """``digest``'s node and all its descendants, in creation order."""
        seen = {digest}
        stack = [digest]
        while stack:
            for c in self.nodes[stack.pop()].children:
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
        return [n for n in self.nodes.values() if n.hash in seen]

    # -- queries -----------------------------------------------------------
    def pending(self) -> list[Node]:
        return [n for n in self.nodes.values() if not n.evaluated]

    def evaluated(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.evaluated]

    def ranked(self, nodes: list[Node] | None = None) -> list[Node]:
        """Correct nodes, best score first; ties go to the earlier candidate."""
        pool = self.nodes.values() if nodes is None else nodes
        return sorted((n for n in pool if n.correct), key=lambda n: (-n.score, n.seq))

    def start_correct(self) -> bool:
        """Whether a start of the run (an evaluated candidate without parents: the
        initial one) is correct; the bench's outcomes do not count it (newcomer nc17)."""
        return any(n.correct for n in self if n.evaluated and not n.parents)

    def best_correct(self, within: str | None = None) -> Node | None:
        """The correct node with the highest score (in ``within``'s subtree if
        given), but never one that reads slower than the root.

        A node whose timing was not trusted scores 0 (:attr:`Node.score`), so
        a correct root timed noisy or under the roofline floor (small GPU
        kernels whose data stays in L2) would rank below any trusted node,
        however slow: a tvm-cuda rmsnorm run on the H200 reported a 0.739x
        candidate as best while its initial read 1.22x. So when the root is
        correct and the top-ranked node's speedup reads below the root's
        (trusted or not), the root is the best: the search claims no result
        slower than where it started (with the root's timing untrusted, it
        claims no speedup at all). A root whose timing is untrusted because
        the machine was busy (:attr:`Node.timing_contended`) is not compared:
        a contended reading says nothing about speed, and one such re-timing
        of the root (1.85x, contended) cost a run its ranked 1.16x best
        (newcomer nc16).
        """
        pool = None if within is None else self.subtree(within)
        ranked = self.ranked(pool)
        if not ranked:
            return None
        best, root = ranked[0], self.root
        if (root is not None and best is not root and root.correct and root.speedup is not None
                and best.speedup is not None and best.speedup < root.speedup and not root.timing_contended
                and (pool is None or root in pool)):
            return root
        return best

    def improvements(self) -> list[Node]:
        """Nodes that raised the best score when evaluated, in creation order
        (the root counts when correct)."""
        out, best = [], float("-inf")
        for n in self.nodes.values():
            if n.correct and n.score > best:
                out.append(n)
                best = n.score
        return out

    def expansions_since_improvement(self) -> int:
        """Expansions made after the one that produced the current best."""
        wins = self.improvements()
        last = (wins[-1].expansion_id or 0) if wins else 0
        return sum(1 for e in self.expansion_log if (e.id or 0) > last)

    def unranked(self) -> list[dict[str, Any]]:
        """Correct candidates whose timing was not believed, so they are not
        ranked by their speedup: ``[{"hash", "speedup", "why"}]``, fastest first
        (``speedup`` is the untrusted reading, ``why`` the finding)."""
        out = []
        for n in self.nodes.values():
            if n.correct and not n.timing_trusted:
                out.append({"hash": n.hash, "speedup": n.speedup, "why": untrusted_findings(n.measurement.findings)[0]})
        return sorted(out, key=lambda d: -(d["speedup"] or 0.0))

    def readings(self) -> dict[str, str]:
        """``{hash: digest}`` of every timed candidate's own readings (its
        speedups against each baseline, with their intervals, and whether its
        timing was trusted): 16 hex digits of a sha256. An export records its
        candidate's digest, so re-timing another candidate of the run does not
        make it stale (newcomer nc20: one digest of the whole ``summary.json``
        named every export stale)."""
        out = {}
        for n in self.nodes.values():
            m = n.record.measurement
            if m is not None:
                key = {"speedups": [s.__dict__ for s in m.speedups], "trusted": n.timing_trusted}
                out[n.hash] = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]
        return out

    def verdict_counts(self) -> dict[str, int]:
        return dict(Counter(n.verdict for n in self.nodes.values() if n.evaluated))

    def lookahead_stats(self) -> dict[str, Any]:
        """How often a win descended from a node that was slower when created.

        A win is a node that raised the best score (:meth:`improvements`, root
        excluded). Returns ``{"wins", "wins_from_slower", "fraction",
        "slower_at_creation"}`` where ``slower_at_creation`` counts correct
        nodes slower than their first parent when evaluated.
        """
        wins = [n for n in self.improvements() if n.parents]
        slower = {n.hash for n in self.nodes.values() if n.slower_at_creation}
        from_slower = [w for w in wins if self.ancestors(w.hash) & slower]
        return {
            "wins": len(wins),
            "wins_from_slower": len(from_slower),
            "fraction": len(from_slower) / len(wins) if wins else None,
            "slower_at_creation": len(slower),
        }

    def declines(self) -> list[dict[str, Any]]:
        """Every decline stored on the tree (an expansion whose error is
        ``Declined: {json}``, as :class:`kstrata.agents.router.Declined` is
        stored): ``[{"candidate", "expansion", "level", "role", "diagnosis",
        "requests"}]`` in expansion order."""
        out = []
        for e in self.expansion_log:
            err = getattr(e, "error", None) or ""
            if not err.startswith(DECLINED_PREFIX):
                continue
            try:
                rec = json.loads(err[len(DECLINED_PREFIX):].split("\n", 1)[0])
            except ValueError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("requests"), list):
                out.append({**rec, "candidate": e.candidate, "expansion": e.id})
        return out

    # -- rendering ---------------------------------------------------------
    def label(self, node: Node, finished: bool = False) -> Text:
        """``hash8 level role verdict speedup [router reason]`` for one node
        (``finished``: the run has stopped, so an unevaluated node never will
        be): :func:`kstrata.search.views.node_label`, the one place a node's
        speedup reading and "slower than its parent" are decided."""
        from kstrata.search.views import node_label

        return node_label(self, node, finished)

    def render(self, title: str = "candidates", finished: bool = False) -> Tree:
        """A :class:`rich.tree.Tree` of the lineage (each node under its first
        parent); ``finished`` as in :meth:`label`."""
        tree = Tree(Text(title, style="bold"))
        if self.root is None:
            return tree
        declined: dict[str, list[dict[str, Any]]] = {}
        for d in self.declines():
            declined.setdefault(d["candidate"], []).append(d)
        stack = [(self.root, tree)]
        while stack:
            node, branch = stack.pop()
            sub = branch.add(self.label(node, finished))
            for d in declined.get(node.hash, []):
                asks = "; ".join(f"asked {r.get('level')}: {str(r.get('text', ''))[:80]}" for r in d["requests"])
                what = (f"{d.get('level')} skipped, no call" if d.get("skipped")
                        else f"declined at {d.get('level')} ({d.get('role')})")
                # kstrata's own reasons (a skipped level: what to add, with an example) are shown whole and wrap
                # (newcomer nc15: cut mid-word at 120 characters); a model's diagnosis is cut, `kstrata show` has it
                said = str(d.get("diagnosis", ""))
                said = said if d.get("skipped") or len(said) <= 120 else said[:120] + "…"
                sub.add(Text(f"{what}: {said}" + (f" ({asks})" if asks else ""), style="dim"))
            kids = [c for c in self.children(node.hash) if c.parents[0] == node.hash]
            stack.extend((c, sub) for c in reversed(kids))
        return tree
