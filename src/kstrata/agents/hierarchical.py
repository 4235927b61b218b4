"""The hierarchical agent: graph, schedule and source roles behind a feedback router.

:class:`HierarchicalProposer` implements the :class:`~kstrata.agents.base.Proposer`
protocol. For the level the router chose it asks that level's role: a
:class:`LevelAgent` (an LLM with the ``graph.j2``/``schedule.j2``/``source.j2``
prompt, which sees its level in full and the others summarized), or, without
an LLM, the built-in rules (:class:`~kstrata.agents.builtin.TVMRulesProposer`).
Then, for every proposal:

- **Scope.** A role may change only its level: a proposal whose upper levels
  differ from the parent's, or whose lower levels are neither the parent's
  nor left out, is refused; the refusal is stored in the short-term memory
  and on the other proposals (``metadata["refused"]``), and when nothing is
  left the expansion's error says why.
- **Rebuild.** Levels below the edited one are rebuilt from it: ``source`` is
  dropped after a graph or schedule change (the backend regenerates it); after
  a graph change on TVM the parent's schedule is replayed on the re-lowered
  graph (:func:`kstrata.backends.tvm.schedule.replay_schedule`), steps that no
  longer apply are dropped and listed in ``metadata["replay"]``, and the
  router (:mod:`kstrata.agents.router`, rule 1) sends the new node to the
  schedule role next, whose proposals carry ``metadata["rebuild_of"]`` and the
  replay report.
- **Cross-level requests and declines.** ``CROSS-LEVEL REQUEST: <level>: <text>``
  lines of an answer are kept in ``metadata["cross_level_request"]``; an
  answer that declines (``DECLINE``, a ``DIAGNOSIS:`` and requests, no code;
  :func:`kstrata.agents.parse.parse_decline`) raises
  :class:`~kstrata.agents.router.Declined`, which the loop stores with the
  expansion. The router acts on both (rule 2) and the requested role sees
  them in its prompt until a change at that level serves them. A request
  reaches only the candidate it was made on and those below it, and only
  an edit of those serves it (r7: a request naming a graph child's functions
  was shown to its parent, which lacked them:
  :func:`~kstrata.agents.llm_agent.placed_requests`).
- **Memory.** Prompts get this run's history (the edits on the path, what was
  tried from this candidate, declines and unusable answers, with the agents'
  own reasons; keyed by run, task and backend, so a new run starts empty) and
  the most similar skills of earlier runs at the same level and backend
  (long-term, :class:`~kstrata.agents.memory.MemoryStore`); :meth:`learn`
  stores a proposal that beat its parent as a skill only when both timings
  are trusted.
- **Knowledge.** Prompts get the target's hardware spec, the toolchain's API
  sheet and the exemplars of the task's category (:mod:`kstrata.agents.exemplars`).

Ablations (:class:`Ablations`) switch parts off with the budget unchanged:
``flat`` (one agent with the single-role prompt for every level), ``linear``
(:class:`LinearPolicy`: always expand the latest node), ``unrouted``
(round-robin levels), ``no-memory``, ``no-lookahead``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kstrata.agents.ablations import ABLATION_NAMES, Ablations  # noqa: F401 (re-exported)
from kstrata.agents.base import Proposal, ProposalBatch, ProposeContext
from kstrata.agents.closed import ClosedLevels, skipped
from kstrata.agents.exemplars import exemplars_for, intensity_of
from kstrata.agents.knowledge import spec_for_backend
from kstrata.agents.llm_agent import (LLM_MAX_PER_LEVEL, ask, editable_on, editable_only, known_candidate,
                                      prompt_context, replay_in_sandbox)
from kstrata.agents.llvm_debug import editable_sources, restorer
from kstrata.agents.memory import Attempt, MemoryStore, Skill, op_text
from kstrata.agents.parse import clip_marked, parse_cross_level_requests
from kstrata.agents.prompt import build_prompt, environment
from kstrata.agents.run_history import first_line, judge_failure, reason, tree_history
from kstrata.agents.run_history import outcome as node_outcome
from kstrata.agents.router import Declined, FeedbackRouter, derived_below, editable_levels, rebuild_needed
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.search.policies import Expansion, Policy, default_router, make_policy

LEVELS = ("graph", "schedule", "source")
#: --ablate names -> Ablations field and value


class RefusedProposals(RuntimeError):
    """Every proposal of an expansion was out of its role's scope (the loop
    records the message as the expansion's error and keeps ``calls``)."""

    def __init__(self, message: str, calls: list[Any]):
        super().__init__(message)
        self.calls = calls


class LinearPolicy(Policy):
    """Linear history: always expand the most recently created correct node
    (the root while nothing is correct), at the router's level."""

    name = "linear"

    def select(self, tree: Any, rng: random.Random) -> Expansion | None:
        for node in reversed(list(tree)):
            if node.correct and self.expandable(tree, node):
                return Expansion(node.hash, None, f"linear: latest correct node (#{node.seq})")
        return self.fallback(tree)


class LevelAgent:
    """One LLM role: edits ``level`` (or, as ``role="single"``, whichever level it is given).

    Parameters
    ----------
    provider, log:
        A :class:`kstrata.llm.base.Provider` and the :class:`kstrata.llm.CallLog` it reports to.
    role:
        ``graph``, ``schedule``, ``source`` or ``single``.
    max_format_retries:
        Extra calls when an answer does not parse (each counts against the budget).
    level_notes:
        What each level's text means on this backend.
    """

    def __init__(self, provider: Any, log: Any, role: str, max_format_retries: int = 1,
                 level_notes: Mapping[str, str] | None = None):
        self.provider, self.log, self.role = provider, log, role
        self.max_format_retries = max_format_retries
        self.level_notes = dict(level_notes or {})

    def run(self, task: Any, sources: Mapping[str, str], feedback: Any, level: str,
            context: ProposeContext, history: tuple[str, ...], extra: str,
            candidate: Any = None, backend: Any = None,
            text_of: Any = None, closed: Any = None) -> tuple[list[Proposal], list[str]]:
        """Proposals (at most one) and the reasons of unusable answers.

        Raises
        ------
        kstrata.agents.router.Declined
            When the model declines; it carries the calls made.
        """
        restore = restorer(context.backend, sources, level)  # what the shown text leaves out, put back
        sources = editable_sources(context.backend, sources, level)  # tvm-llvm IR: no debug metadata, folded
        ctx = prompt_context(task, candidate, feedback, level, role=self.role, backend_name=context.backend,
                             backend=backend, tree=context.tree, history=history, decline=True,
                             sources=sources, notes=self.level_notes, text_of=text_of,
                             run_shape=context.timing_shape, closed=closed)
        messages = build_prompt(ctx)
        if extra:
            messages[-1]["content"] += "\n\n" + extra
        answer, problems = ask(self.provider, self.log, messages, sources, level, role=self.role,
                               language=ctx.language, retries=self.max_format_retries,
                               calls_left=context.budget_left.get("proposer_calls"), other_roles=ctx.other_roles,
                               known=known_candidate(context.tree, task, context.backend), restore=restore)
        if answer is None:
            return [], problems
        new, parsed, text = answer
        meta = {"mode": parsed.mode, "agent": f"{self.role}-agent"}
        requests = [r for r in parse_cross_level_requests(text) if r["level"] != level]
        if requests:
            meta["cross_level_request"] = requests
        return [Proposal(sources=new, level=level, role=f"{self.role}-agent",
                         rationale=parsed.rationale, metadata=meta)], problems


def scope_violation(parent: Mapping[str, str], p: Proposal, level: str, levels: tuple[str, ...]) -> str | None:
    """Why ``p`` edits more than ``level`` of ``parent`` (``None`` when it does not).

    Upper levels must equal the parent's; lower levels must equal the
    parent's or be left out (they are then rebuilt from the edited level).
    """
    if p.level != level:
        return f"asked for a {level} edit, got a {p.level} edit"
    order = [lv for lv in LEVELS if lv in levels]
    at = order.index(level) if level in order else 0
    for i, lv in enumerate(order):
        if lv == level:
            continue
        mine, theirs = p.sources.get(lv), parent.get(lv)
        if (mine or "").strip() == (theirs or "").strip():
            continue
        if i > at and mine is None:
            continue
        return f"the {p.role} changed the {lv} level (it may edit only {level})"
    return None


class HierarchicalProposer:
    """Graph, schedule and source roles behind a router (see the module docstring).

    Parameters
    ----------
    backend:
        The backend object (``name``, ``levels``; TVM backends also ``lower``).
    agents:
        Role per level: a :class:`LevelAgent` or any
        :class:`~kstrata.agents.base.Proposer`. Levels without one use ``rules``.
    rules:
        A proposer for the levels that have no agent (the built-in rules), or ``None``.
    memory:
        The :class:`~kstrata.agents.memory.MemoryStore`, or ``None`` (no memory).
    ablations:
        :class:`Ablations` (or its ``parse`` input).
    skills_k, history_k:
        Skills and history lines per prompt.
    """

    name = "hierarchical"

    def __init__(self, backend: Any, agents: Mapping[str, Any] | None = None, rules: Any = None,
                 memory: MemoryStore | None = None, ablations: Any = None, skills_k: int = 2,
                 history_k: int = 10):
        self.backend = backend
        self.agents = dict(agents or {})
        self.rules = rules
        self.ablations = Ablations.parse(ablations)
        self.memory = memory if self.ablations.memory else None
        self.skills_k, self.history_k = skills_k, history_k
        self.levels = tuple(getattr(backend, "levels", LEVELS))
        self.refusals: list[dict[str, str]] = []
        self._learned: set[str] = set()
        #: candidate hash -> levels it has text for (the loop's tree is read without sources)
        self._text: dict[str, frozenset[str]] = {}
        #: levels with nothing left to edit on a candidate (declined, served, nothing in the lowered graph,
        #: written by the request/rebuild chain, superseded)
        self.closed = ClosedLevels(lineage=True)
        #: candidate hash -> the text its role wrote at its level (for located failures)
        self._proposed: dict[str, str] = {}
        self._last_task: Any = None
        self._last_run_key = ""
        suffix = "-".join(self.ablations.names())
        self.name = "hierarchical" + (f"[{suffix}]" if suffix else "")

    # -- what the loop needs besides propose -----------------------------------
    @property
    def router(self) -> Any:
        """The loop's ``router=``: :class:`FeedbackRouter`, or round-robin when unrouted."""
        if self.ablations.unrouted:
            return default_router
        return FeedbackRouter(backend=getattr(self.backend, "name", None), known_text=self._text.get,
                              levels=self.levels, closed=lambda tree, node, lv: self.closed.why(node, lv, tree))

    def policy(self, policy: Any) -> Policy:
        """``policy`` (a name or object), replaced by :class:`LinearPolicy` when
        linear, whose open levels are only those a role can edit on the node
        (:func:`~kstrata.agents.router.editable_levels`: never TVM's ``source``
        without text). A policy given by name allows :data:`LLM_MAX_PER_LEVEL`
        expansions per node and level when an LLM role exists, so a role whose
        answer failed is asked again there, with its failure in the prompt
        (a closed level is not: :func:`~kstrata.agents.llm_agent.editable_on`,
        :mod:`kstrata.agents.closed`)."""
        pol = make_policy(policy)
        if self.ablations.linear:
            pol = LinearPolicy(pol.max_per_level)
        if isinstance(policy, str) and any(isinstance(a, LevelAgent) for a in self.agents.values()):
            pol.max_per_level = max(pol.max_per_level, LLM_MAX_PER_LEVEL)
        return editable_only(pol, lambda node, tree, **kw: editable_on(node, self.backend.name, self.levels,
                                                                       self._text, self.closed, tree, **kw))

    def settings(self, settings: Any) -> Any:
        """``settings`` (:class:`kstrata.search.loop.SearchSettings`) with lookahead off when ablated."""
        return settings if self.ablations.lookahead else replace(settings, lookahead_expansions=0)

    # -- propose -----------------------------------------------------------------
    def _agent(self, level: str) -> Any:
        return self.agents.get(level) or self.rules

    def run_key(self, task: Any, context: ProposeContext) -> str:
        """The short-term memory key: task, backend, seed and the run itself
        (its root's hash and creation time, which a resumed run reads back from
        its store, so it continues its own history and a new run of the same
        task starts with none)."""
        root = getattr(context.tree, "root", None)
        rid = f"{(getattr(root, 'hash', '') or '')[:16]}@{getattr(root, 'created', '') or ''}"
        return f"{task.digest[:16]}:{context.backend}:{context.seed}:{rid}"

    def propose(self, task: Any, candidate: Any, feedback: Any, level: str, *,
                context: ProposeContext) -> ProposalBatch:
        """Ask ``level``'s role, refuse out-of-scope proposals, rebuild lower levels."""
        parent = {k: v for k, v in dict(candidate.sources).items() if isinstance(v, str)}
        self._text[candidate.hash] = frozenset(lv for lv, t in parent.items() if t.strip())
        self.closed.observe(candidate.hash, parent)
        key = self.run_key(task, context)
        self._last_task, self._last_run_key = task, key
        if context.tree is not None:
            self.learn(context.tree, task)
        rebuild = self._rebuild_report(candidate, level, context.tree)
        agent = self._agent(level)
        calls: list[Any] = []
        if agent is None:
            self._remember(key, Attempt(candidate.hash, level, "none", "no_agent",
                                        reason=f"no role for the {level} level"))
            return skipped(level, f"no role for the {level} level")
        if isinstance(agent, LevelAgent):
            why = self._nothing_to_edit(task, candidate, level, context)
            if why is not None:  # no call: the role would have nothing to edit (stored on the tree, not shown)
                return skipped(level, why)
            history = self.history(key, context.tree, candidate, level, order=tuple(task.nominal_shape))
            extra = self.knowledge(task, context, candidate, level, rebuild)
            try:
                proposals, problems = agent.run(task, parent, feedback, level, context, history, extra,
                                                candidate=candidate, backend=self.backend,
                                                text_of=lambda h: self._proposed_text(key, h),
                                                closed=self.closed)
            except Declined as d:
                self.closed.close(candidate.hash, level, f"the {agent.role} role declined on "
                                                         f"{candidate.hash[:8]}: {clip_marked(d.record['diagnosis'], 200)}")
                asks = "; ".join(f"asks {r['level']}: {r['text']}" for r in d.record["requests"])
                self._remember(key, Attempt(candidate.hash, level, agent.role + "-agent", "declined",
                                            clip_marked(d.record["diagnosis"], 300), asks or "no request"))
                raise
            calls = list(agent.log.take())
            for why in problems:
                outcome = "no_answer" if why.startswith("no answer") else "parse_error"
                self._remember(key, Attempt(candidate.hash, level, agent.role + "-agent", outcome, reason=why))
        else:
            out = agent.propose(task, candidate, feedback, level, context=context)
            batch = out if isinstance(out, ProposalBatch) else ProposalBatch(list(out))
            proposals, calls, problems = list(batch.proposals), list(batch.calls), list(batch.problems)
        accepted, refused = [], []
        for p in proposals:
            why = scope_violation(parent, p, level, self.levels)
            if why is not None:
                refused.append(why)
                self.refusals.append({"candidate": candidate.hash, "level": level, "role": p.role, "reason": why})
                self._remember(key, Attempt(candidate.hash, level, p.role, "refused",
                                            first_line(p.rationale), why))
                continue
            accepted.append(self._finish(task, parent, p, candidate, level, rebuild, context, key))
        if refused:
            accepted = [replace(p, metadata={**p.metadata, "refused": refused}) for p in accepted]
            if not accepted:
                raise RefusedProposals("refused out-of-scope proposals: " + "; ".join(refused), calls)
        return ProposalBatch(accepted, calls, problems=[] if proposals else list(problems))

    def _finish(self, task: Any, parent: dict[str, str], p: Proposal, candidate: Any, level: str,
                rebuild: dict | None, context: ProposeContext, key: str) -> Proposal:
        order = [lv for lv in LEVELS if lv in self.levels]
        below = order[order.index(level) + 1:] if level in order else []
        # only text generated from the edited level is stale (TVM's source); a TileLang source, which
        # reads the schedule level's overrides, stays (it was dropped, so every schedule change there
        # was a candidate without its kernel: "a TileLang candidate needs a 'source' level")
        stale = derived_below(self.backend.name, level, self.levels)
        sources = {k: v for k, v in p.sources.items() if k not in stale and (k not in below or k != "schedule")}
        meta = dict(p.metadata)
        meta.setdefault("agent", p.role)
        dropped = [lv for lv in stale if lv in parent]
        if level == "graph" and "schedule" in below and self._is_tvm():
            sources, report = self._replay(task, parent, sources)
            meta["replay"] = report
        elif "schedule" in below and "schedule" in parent:
            sources["schedule"] = p.sources.get("schedule", parent["schedule"])
        if dropped:
            meta["dropped_levels"] = dropped
        structure = (meta.get("replay") or {}).get("structure")  # a graph change's new PrimFuncs
        if rebuild is not None:
            meta["rebuild_of"] = candidate.hash
            meta["replay"] = rebuild
        if context.router_reason:
            meta["router_reason"] = context.router_reason
        meta["text_levels"] = sorted(lv for lv, t in sources.items() if isinstance(t, str) and t.strip())
        p = replace(p, sources=sources, metadata=meta)
        child = content_hash(normalize_sources(sources), self.backend.name, task.digest)
        self._text[child] = frozenset(meta["text_levels"])
        self.closed.observe(child, sources)
        if structure is not None:
            self.closed.observe_structure(child, structure)
        self._proposed[child] = sources.get(level, "")
        self._remember(key, Attempt(candidate.hash, level, p.role, "proposed", reason(p.rationale),
                                    # both as the role was shown them (tvm-llvm IR without debug metadata, folded),
                                    # so a lesson's diff holds the change only
                                    child=child, after=editable_sources(context.backend, sources, level)
                                    .get(level, ""),
                                    before=editable_sources(context.backend, parent, level).get(level, "")))
        return p

    def _nothing_to_edit(self, task: Any, candidate: Any, level: str, context: ProposeContext) -> str | None:
        """Why ``level`` has nothing for its role on ``candidate`` (``None``:
        ask it): no text there, or nothing in the lowered graph
        (:meth:`~kstrata.agents.closed.ClosedLevels.nothing_to_edit`). The
        structure is read at every level (from the same cached, sandboxed
        lowering the prompt's TensorIR comes from), so the policy and the
        router know it for this graph text before its other levels are chosen."""
        hook = getattr(self.backend, "level_structure", None)
        if callable(hook) and "graph" in self.levels:
            self.closed.observe_structure(candidate.hash, hook(task, dict(candidate.sources)))
        self.closed.observe_empty(candidate.hash, self.backend, dict(candidate.sources), self.levels)
        if level not in editable_levels(context.backend, self.levels, self._text[candidate.hash]):
            return f"nothing to edit at the {level} level: this candidate has no {level} text"
        return self.closed.nothing_to_edit(candidate, level)

    def _proposed_text(self, key: str, child: str) -> str | None:
        """The text a role wrote for ``child`` at its level: kept in this
        process, else (a resumed run) from the short-term memory."""
        if child in self._proposed:
            return self._proposed[child]
        if self.memory is not None:
            for a in self.memory.attempts(key, outcome="proposed"):
                if a.child == child:
                    return a.after
        return None

    def _is_tvm(self) -> bool:
        return self.backend.name.startswith("tvm-") and hasattr(self.backend, "lower")

    def _replay(self, task: Any, parent: dict[str, str], sources: dict[str, str]) -> tuple[dict[str, str], dict]:
        """Replay the parent's schedule on the new graph; drop the steps that fail.

        Both texts are candidate text: the lowering and the replay run in a
        sandboxed process (:func:`kstrata.backends.tvm.isolated.replay_after_graph_change`),
        never here; a failure there keeps the parent's schedule and its report says why.
        """
        return replay_in_sandbox(task, parent, sources, self.backend.name)

    @staticmethod
    def _rebuild_report(candidate: Any, level: str, tree: Any = None) -> dict | None:
        """The replay report of ``candidate``'s graph change for its schedule
        prompt, with ``tried``: how many schedule children it has already (the
        report is about the graph change, not about those answers)."""
        meta = getattr(candidate, "metadata", None) or {}
        if level == "schedule" and getattr(candidate, "level", None) == "graph" and "replay" in meta \
                and rebuild_needed(meta["replay"]) is not None:
            tried = 0
            if tree is not None and candidate.hash in getattr(tree, "nodes", {}):
                tried = sum(1 for c in tree.children(candidate.hash) if c.level == "schedule")
            return {**meta["replay"], "tried": tried}
        return None

    # -- prompt material -----------------------------------------------------------
    def history(self, key: str, tree: Any, candidate: Any, level: str,
                order: Sequence[str] = ()) -> tuple[str, ...]:
        """This run's history for a prompt: the edits on the path to
        ``candidate``, what was tried from it that left no child (refusals
        and unusable answers; its children and declines are in the prompt's
        :func:`~kstrata.agents.run_history.earlier_answers` in full) and
        recent failures at ``level`` elsewhere in the run, each with the
        agent's own stated reason. Only this run's (``key``; the tree is this run's)."""
        if self.memory is None:
            return ()  # memory ablated: no short-term memory either
        lines = tree_history(tree, candidate, level, self.history_k, order=order)
        for a in self.memory.attempts(key, parent=candidate.hash):
            if a.outcome not in ("proposed", "declined"):
                lines.append("from this candidate: " + a.line())
        return tuple(lines[-self.history_k:])

    def knowledge(self, task: Any, context: ProposeContext, candidate: Any, level: str,
                  rebuild: dict | None) -> str:
        """The extra prompt section: rebuild report, exemplars (not one whose
        code is already one of the candidate's texts), similar skills,
        the cross-level request format (requests for this level are in every
        LLM prompt: :func:`~kstrata.agents.llm_agent.prompt_context`)."""
        category = getattr(getattr(task, "meta", None), "category", "") or ""
        tags = tuple(getattr(getattr(task, "meta", None), "tags", ()) or ())
        skills = []
        if self.memory is not None:
            run = self.run_key(task, context)
            for score, s in self.memory.similar(op_text(task), category=category, backend=context.backend,
                                                level=level, k=self.skills_k, same_level=True,
                                                same_backend=True, exclude_run=run):
                skills.append((score, {**s.to_json(), "diff_short": _short_diff(s.diff)}))
        lessons = self.memory.lessons(task.name, context.backend, level, exclude_run=run) \
            if self.memory is not None else []
        has = frozenset(lv for lv, t in dict(candidate.sources).items() if isinstance(t, str) and t.strip())
        others = [lv for lv in editable_levels(context.backend, self.levels, has)
                  if lv != level and self.closed.offered(candidate, lv, context.tree)]
        # an exemplar the candidate already is (its code adopted whole) would repeat its own text as advice
        own = {_code_key(t) for t in dict(candidate.sources).values() if isinstance(t, str)}
        # the schedule part of a graph exemplar, promised to the schedule role by the graph prompt: shown
        # where this candidate's graph is that exemplar or keeps the PrimFuncs and blocks it names
        graph_text = str(dict(candidate.sources).get("graph") or "")
        schedules = []
        for e in exemplars_for(category, context.backend, "graph", intensity=intensity_of(task), tags=tags):
            fitted = _fitted_schedule(e.schedule, graph_text) if e.schedule and level == "schedule" else None
            if fitted is not None and _code_key(fitted) not in own:
                schedules.append({"title": e.title, "schedule": fitted, "renamed": fitted != e.schedule,
                                  "adopted": _code_key(e.code) == _code_key(graph_text)})
        return environment().get_template("hierarchical_knowledge.j2").render(
            rebuild=rebuild, schedule_exemplars=schedules,
            exemplars=[e for e in exemplars_for(category, context.backend, level, intensity=intensity_of(task), tags=tags)
                       if _code_key(e.code) not in own],
            skills=skills, lessons=lessons, category=category or "this", level=level, flat=self.ablations.flat,
            backend=context.backend, other_roles=others,
        ).strip()

    # -- memory --------------------------------------------------------------------
    def _remember(self, key: str, attempt: Attempt) -> None:
        if self.memory is not None:
            self.memory.add_attempt(key, attempt)

    def learn(self, tree: Any, task: Any = None, min_gain: float = 1.02) -> list[Skill]:
        """Store as skills the proposals of this run that beat their parent by
        more than ``min_gain`` (speedups against the primary baseline), filed
        under the level edited and this backend; each is stored once. Only
        verified (correct) candidates with trusted timings on both sides count:
        never a timing marked untrusted or overhead-dominated. Returns the new skills."""
        task = task or self._last_task
        if self.memory is None or task is None or tree is None or tree.root is None:
            return []
        key = self._last_run_key
        made = {a.child: a for a in self.memory.attempts(key, outcome="proposed") if a.child}
        hw = (spec_for_backend(self.backend.name) or {}).get("name", "")
        out = []
        for n in tree:
            a = made.get(n.hash)
            if a is None or n.hash in self._learned or n.speedup is None or not n.parents:
                continue
            parent = tree[n.parents[0]]
            before = parent.speedup
            if before is None or before <= 0 or n.speedup < before * min_gain:
                continue
            if not (_trusted(n) and _trusted(parent)):
                continue
            self._learned.add(n.hash)
            skill = Skill(backend=self.backend.name, level=a.level, after=a.after, before=a.before,
                          speedup=n.speedup / before, task=task.name,
                          category=getattr(getattr(task, "meta", None), "category", "") or "",
                          hardware=str(hw), role=a.role, description=a.summary, search_text=op_text(task),
                          run=key)
            if self.memory.add_skill(skill) is not None:
                out.append(skill)
        self._record_lessons(tree, task, key, made)
        return out

    def _record_lessons(self, tree: Any, task: Any, key: str, made: dict[str, Attempt]) -> None:
        """Store this run's proposals that failed verification (not those the
        judge itself failed on) as lessons for later runs on the task
        (:meth:`MemoryStore.lessons`), with where each failed and, when a later
        proposal of this run at the same level from the same text passed, what
        that fix said (queue round rt66: a rerun of add_layernorm was told the
        first run's graph change failed at D=77, not that the same run fixed it
        with a `< d` tail mask, and no skill crossed runs: no timing was trusted)."""
        nodes = list(tree)
        for i, n in enumerate(nodes):
            a = made.get(n.hash)
            if a is None or not n.evaluated or n.correct or judge_failure(n):
                continue
            fix = next((c for c in nodes[i + 1:] if c.correct and c.hash in made and made[c.hash].level == a.level
                        and made[c.hash].before == a.before), None)
            fixed = (f"; fixed later in that run (correct) by: {reason(fix.rationale, 200) or 'an edit'}"
                     if fix is not None else "")
            self.memory.add_lesson(key, n.hash, task=task.name, backend=self.backend.name, level=a.level,
                                   role=a.role, summary=reason(a.summary, 200),
                                   outcome=node_outcome(n, tuple(task.nominal_shape)) + fixed + _located(n))


#: the located items a lesson keeps beside the verdict (a hidden failure's public probe says where it reproduces)
LESSON_ITEMS = ("public_probe", "values", "nonfinite")


def _located(node: Any) -> str:
    """Where ``node``'s failure was located, for a lesson: the first item of
    each kind in :data:`LESSON_ITEMS` (``""`` without any), each clipped."""
    ev = node.record.evaluation
    items = ev.feedback if ev is not None and isinstance(ev.feedback, list) else []
    texts = []
    for kind in LESSON_ITEMS:
        text = next((str(i.get("text", "")) for i in items if isinstance(i, dict) and i.get("kind") == kind), "")
        if text:
            texts.append(text[:240] + ("..." if len(text) > 240 else ""))
    return "; where: " + "; ".join(texts) if texts else ""


def _names_fit(schedule: str, graph: str) -> bool:
    """Whether ``graph`` defines every PrimFunc (``def schedule_<name>``) and
    block (``get_sblock("<name>")``, or a name in a ``for`` loop's literal
    list) that ``schedule`` names."""
    funcs = re.findall(r"def schedule_(\w+)\(", schedule)
    blocks = re.findall(r"get_sblock\(\s*[\"'](\w+)[\"']", schedule)
    # and the names a loop feeds to get_sblock: `for name in ["s_part", "q_part"]:`
    for names in re.findall(r"for \w+ in [\[(]([^\])]*)[\])]", schedule):
        blocks += re.findall(r"[\"'](\w+)[\"']", names)
    return all(re.search(rf"def {f}\(", graph) for f in funcs) \
        and all(re.search(rf"sblock\(\s*[\"']{b}[\"']", graph) for b in blocks)


def _fitted_schedule(schedule: str, graph: str) -> str | None:
    """``schedule`` (a graph exemplar's) as it applies to ``graph``: as it is
    where ``graph`` has the PrimFuncs and blocks it names (:func:`_names_fit`);
    with its one schedule function renamed where ``graph`` writes one PrimFunc
    by hand under another name with every block it names (queue round of
    2026-12-05: the norm exemplar's rows PrimFunc, adapted as
    ``add_layer_norm_rows`` with the same blocks, got no schedule exemplar);
    else ``None``. Text only: ``graph`` is never parsed."""
    if _names_fit(schedule, graph):
        return schedule
    funcs = re.findall(r"def schedule_(\w+)\(", schedule)
    written = re.findall(r"@T\.prim_func[^\n]*\n\s*def (\w+)\(", graph)
    if len(funcs) != 1 or len(written) != 1:
        return None
    renamed = re.sub(rf"def schedule_{funcs[0]}\(", f"def schedule_{written[0]}(", schedule)
    return renamed if _names_fit(renamed, graph) else None


def _code_key(text: str) -> str:
    """``text`` without trailing spaces and outer blank lines, to compare code."""
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _short_diff(diff: str, max_lines: int = 60) -> str:
    """``diff`` whole when short, else its head with the number of lines left out."""
    lines = diff.splitlines()
    if len(lines) <= max_lines:
        return diff.rstrip("\n")
    return "\n".join(lines[:max_lines] + [f"... ({len(lines) - max_lines} more diff lines)"])


def _trusted(node: Any) -> bool:
    """A correct node with a timing neither untrusted nor overhead-dominated."""
    from kstrata.measure.profilers.findings import DISTRUST_PREFIXES

    m = node.record.measurement
    if not node.correct or m is None or not node.timing_trusted:
        return False
    # the evaluator puts the timing's suspicious notes (overhead-dominated ones too) among the findings
    return not any(isinstance(f, str) and f.startswith(DISTRUST_PREFIXES) for f in m.findings or [])
