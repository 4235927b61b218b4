"""The optimize loop: a MetaSchedule-like lifecycle over a persistent tree.

::

    pre_search ─► ┌ evaluate pending candidates (each result committed atomically
                  │   with the candidate's status) ─► notify
                  │ stop? (budget, patience, roofline target, policy exhausted, an
                  │   incorrect start that the proposer cannot repair)
                  │ select: lookahead first, else the policy; router picks the level
                  │ propose ─► one transaction: expansion + proposer calls + new
                  └   candidates (status pending, deduplicated by content hash)
    post_search ─► best candidate's sources and summary.json written

Resume: every decision is derived from the store (tree, expansion log, ledger)
and a seed per step, so a run killed at any moment (SIGKILL) continues with
``resume=True``: pending candidates are evaluated, evaluated ones never again,
and the choices that follow are those an uninterrupted run would make (with a
deterministic proposer and evaluator, and no wall-clock limit hit).
"""

from __future__ import annotations

import json
import random
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kstrata.agents.base import ProposalBatch, ProposeContext, Proposer, validate_proposal
from kstrata.sandbox.policy import SandboxUnavailable
from kstrata.search.budget import LIMIT_KINDS, Budget
from kstrata.search.candidate import content_hash, normalize_sources, to_evaluation_record
from kstrata.search.candidate import to_measurement_record
from kstrata.search.policies import Expansion, Policy, default_router, make_policy
from kstrata.search.tree import CONFIRMATION_TIMEOUT, DECLINED_PREFIX, CandidateTree, Node
from kstrata.shellarg import arg, resume_command
from kstrata.store import artifacts
from kstrata.store.lock import run_lock
from kstrata.store.records import CandidateRecord, EvaluationRecord, ExpansionRecord, jsonable
from kstrata.store.run_store import RunStore, StoreError, no_run_here
from kstrata.tasks.errors import ReferenceFailure


class Evaluator(Protocol):
    """Verifies and times one candidate; never raises for a bad candidate.

    ``evaluate(task, backend, sources)`` returns ``(evaluation, measurement)``:
    the verifier's result (``verdict``, ``check``, ``evidence``, ``feedback``,
    ``n_public``, ``n_hidden``, ``build_log``; see
    :func:`kstrata.search.candidate.to_evaluation_record`) and the timer's
    result or ``None`` when not correct/not timed (``median_ms``,
    ``speedups``, ``roofline_fraction``, ``bound``, ``findings``; see
    :func:`kstrata.search.candidate.to_measurement_record`). A plain callable
    with that signature works too.
    """

    def evaluate(self, task: Any, backend: Any, sources: dict[str, str]) -> tuple[Any, Any]: ...


#: router(tree, node, open_levels, preference) -> (level, reason)
Router = Callable[[CandidateTree, Node, list[str], tuple[str, ...]], tuple[str, str]]


@dataclass(frozen=True)
class SearchSettings:
    """Search settings besides the policy and the budget.

    Attributes
    ----------
    seed:
        Seeds the policy's and proposer's randomness (per step).
    lookahead_expansions:
        Acceptance with lookahead: a correct candidate made at a level in
        ``lookahead_trigger`` that is slower than its parent gets this many
        ``lookahead_level`` expansions (of the best node in its subtree) before
        the policy decides again. 0 turns lookahead off.
    lookahead_level, lookahead_trigger:
        See above.
    primary_baseline:
        The baseline whose speedup the search maximizes (default: the first
        the timer reports).
    level_order:
        Router tie-break preference (default: the backend's ``level_preference``,
        else its levels).
    final_contenders:
        At the end of the run, up to this many correct candidates whose timing
        was untrusted but read faster than the best ranked one (than none:
        any, when nothing is ranked) are re-timed in the evaluator's longer
        final round (``evaluator.final_round``, when it has one) before the
        best is chosen, fastest reading first; also those that read slower
        than the baseline (m26: gemv's 0.84x child was not re-timed, and the
        run's best stayed its 0.30x start). 0 turns it off.
    """

    seed: int = 0
    lookahead_expansions: int = 2
    lookahead_level: str = "schedule"
    lookahead_trigger: tuple[str, ...] = ("graph",)
    primary_baseline: str | None = None
    level_order: tuple[str, ...] | None = None
    final_contenders: int = 3

    @classmethod
    def from_dict(cls, data: dict) -> SearchSettings:
        """Build from a mapping, rejecting unknown keys (``ValueError``)."""
        known = set(cls.__dataclass_fields__)
        if set(data) - known:
            raise ValueError(f"unknown search settings {sorted(set(data) - known)}; known: {sorted(known)}")
        data = dict(data)
        for key in ("lookahead_trigger", "level_order"):
            if data.get(key) is not None:
                data[key] = tuple(data[key])
        return cls(**data)


@dataclass
class RunResult:
    """Outcome of :func:`optimize`."""

    run_dir: Path
    best: Node | None
    stop_reason: str
    spent: dict[str, float]
    tree: CandidateTree = field(repr=False)

    @property
    def verdict_counts(self) -> dict[str, int]:
        return self.tree.verdict_counts()

    @property
    def lookahead(self) -> dict[str, Any]:
        return self.tree.lookahead_stats()


def _backend_object(backend: Any) -> Any:
    if isinstance(backend, str):
        from kstrata.backends.registry import get_backend

        return get_backend(backend)
    return backend


def _slower(tree: CandidateTree, node: Node) -> bool | None:
    if node.speedup is None or not node.parents:
        return None
    parent = tree[node.parents[0]]
    return None if parent.speedup is None else node.speedup < parent.speedup


class _Run:
    """State of one optimize session (kept small: everything else is in the store)."""

    def __init__(self, task, backend, proposer, evaluator, policy, budget, settings, store, router, progress):
        self.task, self.backend, self.proposer = task, backend, proposer
        self.evaluate = getattr(evaluator, "evaluate", evaluator)
        self.final_round = getattr(evaluator, "final_round", None)
        self.confirm = getattr(evaluator, "confirm", None)
        self.confirm_promoted = getattr(evaluator, "confirm_promoted", None)
        self.policy, self.budget, self.settings = policy, budget, settings
        self.store, self.router, self.progress = store, router, progress
        self.levels = tuple(backend.levels)
        self.extensions = artifacts.backend_extensions(backend)
        self.task_id = store.ensure_task(task)
        self.mark = time.monotonic()
        self.tree = CandidateTree.from_store(store, with_sources=False)

    def elapsed(self) -> float:
        now = time.monotonic()
        out, self.mark = now - self.mark, now
        return out

    def emit(self, event: str, **info: Any) -> None:
        if self.progress is not None:
            self.progress(event, {"tree": self.tree, "spent": self.store.spent(), **info})

    def reload(self) -> None:
        self.tree = CandidateTree.from_store(self.store, with_sources=False)

    def hash(self, sources: dict[str, str]) -> str:
        return content_hash(sources, self.backend.name, self.task.digest)

    # -- steps -------------------------------------------------------------
    def seed_root(self, initial_sources: dict[str, str] | None) -> None:
        if self.tree.root is not None:
            return
        if initial_sources:
            sources = normalize_sources(initial_sources)
            try:
                shipped = normalize_sources(self.backend.initial_sources(self.task))
            except Exception:  # noqa: BLE001 - no start of the backend's to compare with
                shipped = None
        else:
            sources = shipped = normalize_sources(self.backend.initial_sources(self.task))
        rec = CandidateRecord(
            hash=self.hash(sources), sources=sources, level=None, role="initial",
            # the CLI passes the backend's own start too when no --initial was given (newcomer nc17: show
            # called the shipped kernel "the given starting point (--initial)")
            proposer="initial", rationale=("the given starting point (--initial)" if sources != shipped
                                           else "the backend's untuned starting point"),
            backend=self.backend.name,
        )
        self.store.add_candidate(rec, self.task_id, self.extensions)
        self.reload()

    def evaluate_pending(self) -> str | None:
        """Evaluate pending candidates in creation order; a stop reason if the budget ran out."""
        done = []
        for node in self.tree.pending():
            stop = self.budget.exhausted(self.store.spent(), ("evaluations", "wall_s"))
            if stop:
                return stop
            sources = self.store.sources(node.hash)
            self.emit("evaluating", node=node)
            try:
                ev, m = self.evaluate(self.task, self.backend, sources)
                evaluation = to_evaluation_record(ev)
                measurement = None
                if m is not None and evaluation.verdict == "correct":
                    measurement = to_measurement_record(m, self.settings.primary_baseline)
            except ReferenceFailure:
                # the task's own reference cannot be verified (at a shape past its smallest, or the judge ran
                # out of memory): no candidate can pass, and a per-candidate evaluator_exception spent the
                # whole budget and put the error (with a hidden shape) into the next prompt (red-team rt59)
                raise
            except Exception as e:  # noqa: BLE001 - errors are data
                evaluation, measurement = _evaluator_error(e, "evaluation"), None
            node.record.evaluation, node.record.measurement = evaluation, measurement
            node.record.status = "evaluated"
            slower = _slower(self.tree, node)
            self.store.record_evaluation(node.hash, evaluation, measurement, slower, self.elapsed())
            node.record.slower_at_creation = slower
            done.append(node)
            self.emit("evaluated", node=node)
        if done:
            self.policy.notify(self.tree, done)
        return None

    def unfixable_start(self) -> str | None:
        """A stop reason when the start (the root: the backend's kernel or
        ``--initial``) was judged ``incorrect`` or ``rejected`` and the proposer
        cannot repair code (``proposer.repairs`` False: the built-in ones,
        which change parameters and schedules only), so every candidate the
        run could still make would descend from a wrong kernel (newcomer
        nc11: a search from a kernel with a tail bug spent its whole budget on
        its children). Other verdicts go on: a tuner can cure a timeout or
        a compile or runtime error that a setting caused."""
        root = self.tree.root
        if getattr(self.proposer, "repairs", True) or root is None or root.verdict not in ("incorrect", "rejected"):
            return None
        ev = root.record.evaluation
        check = f" ({ev.check})" if ev is not None and ev.check else ""
        return (f"the start {root.hash[:12]} is {root.verdict}{check}, and the built-in proposer cannot fix it "
                "(it changes parameters and schedules, never what the kernel computes), so the search stopped "
                f"after it: see its feedback with `kstrata show {arg(self.store.run_dir)} {root.hash[:12]}`, then fix "
                "the kernel and start again (--initial FILE), or let an LLM proposer repair it (--proposer llm "
                "or hierarchical)")

    def stop_reason(self) -> str | None:
        spent = self.store.spent()
        stop = self.budget.exhausted(spent, tuple(LIMIT_KINDS))
        if stop:
            return stop
        b = self.budget
        if b.patience is not None and self.tree.expansions_since_improvement() >= b.patience:
            return f"patience: {b.patience} expansions without a new best"
        best = self.tree.best_correct()
        if b.target_roofline is not None and best is not None:
            if (best.roofline_fraction or 0.0) >= b.target_roofline:
                return f"target: roofline fraction {best.roofline_fraction:.3g} reached"
        return None

    def exhausted_reason(self) -> str:
        """The stop reason when the policy has nothing left to expand: the
        budget left unused and the policy's account of why (its
        ``exhausted_why(tree)``), so an early stop reads as one."""
        left = self.budget.left(self.store.spent()).get("evaluations")
        unused = f" with {left:g} evaluation(s) of the budget unused" if left else ""
        why = getattr(self.policy, "exhausted_why", None)
        # what kstrata's own proposer said where it proposed nothing (a TileLang kernel without `# kstrata-tune:`
        # choices: newcomer nc15 read only "a proposer that gives the same answer again gains nothing from more")
        said = list(dict.fromkeys(str(d.get("diagnosis", "")) for d in self.tree.declines()
                                  if d.get("skipped") and d.get("role") == "kstrata" and d.get("diagnosis")))
        return (f"policy exhausted: no candidate left to expand{unused}" + (f": {why(self.tree)}" if why else "")
                + (f"; where it made no proposal, the proposer said: {' | '.join(said[:2])}" if said else ""))

    def lookahead(self) -> tuple[Expansion, str] | None:
        """The next lookahead expansion and its anchor, if one is owed."""
        s = self.settings
        if s.lookahead_expansions <= 0 or s.lookahead_level not in self.levels:
            return None
        used: dict[str, int] = {}
        for e in self.tree.expansion_log:
            if e.kind == "lookahead":
                used[e.anchor] = used.get(e.anchor, 0) + 1
        for anchor in self.tree:
            n = used.get(anchor.hash, 0)
            if not (anchor.slower_at_creation and anchor.level in s.lookahead_trigger):
                continue
            if n >= s.lookahead_expansions:
                continue
            for target in self.tree.ranked(self.tree.subtree(anchor.hash)):
                if target.expansions[s.lookahead_level] < self.policy.max_per_level:
                    reason = (  # the words of `kstrata tree`'s legend
                        f"lookahead {n + 1}/{s.lookahead_expansions}: {s.lookahead_level} edit granted to "
                        f"{anchor.level} change {anchor.hash[:8]}, slower than its parent, before it is judged"
                    )
                    return Expansion(target.hash, s.lookahead_level, reason), anchor.hash
        return None

    def expand(self, exp: Expansion, kind: str, anchor: str | None) -> None:
        node = self.tree[exp.node]
        if exp.level is not None:
            level, router_reason = exp.level, exp.reason
        else:
            offered = self.policy.open_levels(node)
            open_levels = offered or list(self.levels)
            preference = self.settings.level_order or getattr(self.backend, "level_preference", None) or self.levels
            level, router_reason = self.router(self.tree, node, open_levels, preference)
            limit = getattr(self.policy, "max_per_level", None)
            if offered and level not in offered and limit is not None and node.expansions[level] >= limit:
                # a router may look past the offered levels (those have nothing to edit), but never at a
                # level the policy has closed on this node: each expansion must count towards the
                # policy's limits, or a level that keeps giving nothing new is asked forever
                router_reason += f" ({level} is at the policy's limit of {limit} on this node: asked {offered[0]})"
                level = offered[0]
        node.record.sources = self.store.sources(node.hash)
        step = len(self.tree.expansion_log)
        ctx = ProposeContext(
            backend=self.backend.name, levels=self.levels, step=step, seed=self.settings.seed,
            budget_left=self.budget.left(self.store.spent()), router_reason=router_reason,
            tree=self.tree, timing_shape=timing_shape_of(self.store.config),
        )
        error, calls, proposals, unusable = None, [], [], []
        min_calls = 1  # a propose that reports no model call (rule-based) counts as one
        self.emit("proposing", node=node, level=level, backend=self.backend.name,
                  proposer=str(getattr(self.proposer, "name", "")))
        try:
            out = self.proposer.propose(self.task, node, node.feedback(), level, context=ctx)
            batch = out if isinstance(out, ProposalBatch) else ProposalBatch(list(out))
            proposals, calls = list(batch.proposals), list(batch.calls)
            unusable = list(batch.problems)
            if batch.skipped is not None and not calls:  # nothing to edit there: no model was asked
                error, min_calls = DECLINED_PREFIX + json.dumps(batch.skipped, sort_keys=True), 0
        except Exception as e:  # noqa: BLE001 - errors are data
            # a decline is an answer, not a crash: its record without a traceback
            error = f"{type(e).__name__}: {e}" + ("" if getattr(e, "is_decline", False)
                                                  else f"\n{traceback.format_exc(limit=5)}")
            calls = list(getattr(e, "calls", []) or [])
            unusable = list(getattr(e, "problems", []) or [])  # answers before a decline that could not be used
            # failed before reaching a model (e.g. a prompt template error): no call is charged,
            # the expansion still is (and the policy's per-level limit still ends a repeating failure)
            min_calls = 0
        new, dup, bad, problems, dups = [], 0, 0, [], []
        if unusable:  # answers the proposer could not use (never silently dropped), a decline's earlier ones too
            bad, problems = len(unusable), [str(u) for u in unusable]
        seen = set()
        for p in proposals:
            why = validate_proposal(p, self.levels)
            if why is None and any(not self.store.has_candidate(h) for h in p.extra_parents):
                why = "extra_parents names an unknown candidate"
            if why is not None:
                bad += 1
                problems.append(why)
                continue
            sources = normalize_sources(p.sources)
            h = self.hash(sources)
            if h in seen or self.store.has_candidate(h):
                dup += 1
                if h not in seen:  # said, so the next prompt for this candidate names it (newcomer nc20)
                    dups.append(f"unusable answer (duplicate): its text is exactly candidate {h[:8]}, which "
                                "this run already has (not evaluated again)")
                continue
            seen.add(h)
            new.append(CandidateRecord(
                hash=h, sources=sources, level=p.level, role=p.role,
                proposer=self.proposer.name, parents=(node.hash, *p.extra_parents),
                rationale=p.rationale, router_reason=router_reason,
                metadata=jsonable(dict(p.metadata)), backend=self.backend.name,
            ))
        if problems and error is None:
            error = "malformed proposals: " + "; ".join((problems + dups)[:5])
        elif dups and error is None:  # a proposal the run has: dropped, and said (run_history.earlier_answers)
            error = "duplicate proposals: " + "; ".join(dups[:5])
        record = ExpansionRecord(
            candidate=node.hash, level=level, proposer=self.proposer.name, kind=kind,
            anchor=anchor, policy_reason=exp.reason, router_reason=router_reason,
            n_proposals=len(proposals), n_new=len(new), n_duplicate=dup, n_malformed=bad,
            error=error, wall_s=self.elapsed(),
        )
        with self.store.transaction():
            exp_id = self.store.add_expansion(record, calls, min_calls=min_calls)
            for rec in new:
                rec.expansion_id = exp_id
                self.store.add_candidate(rec, self.task_id, self.extensions)
        self.reload()
        self.emit("expanded", node=node, level=level, n_new=len(new), error=error)

    def retime_contenders(self) -> None:
        """The end-of-run round: re-time the correct candidates whose timing
        was untrusted but read faster than the best ranked one (fastest
        first, at most ``settings.final_contenders``), replacing their
        measurements, so that noise during the search does not decide the best."""
        if self.final_round is None or self.settings.final_contenders <= 0:
            return
        best = self.tree.best_correct()
        bar = best.score if best is not None and best.timing_trusted else 0.0
        contenders = sorted((n for n in self.tree if n.correct and not n.timing_trusted
                             and (n.speedup or 0.0) > bar),
                            key=lambda n: -(n.speedup or 0.0))[: self.settings.final_contenders]
        for node in contenders:
            self.emit("retiming", node=node)
            try:
                m = self.final_round(self.task, self.backend, self.store.sources(node.hash))
            except Exception:  # noqa: BLE001 - the earlier timing stands
                m = None
            rec = None if m is None else to_measurement_record(m, self.settings.primary_baseline)
            if rec is not None and not node.keeps_reading(rec):
                self.store.replace_measurement(node.hash, rec)
        if contenders:
            self.reload()

    def confirm_best(self) -> None:
        """The end-of-run confirmation (an evaluator whose ``confirm`` returns
        an evaluation, e.g. ``VerifyMeasureEvaluator(confirm_at="end")``):
        verify the run's best at the full scope; when it fails there, store
        that verdict in place of its screening one and confirm the next best,
        at most :data:`MAX_CONFIRMATIONS` times. A confirmed best is marked
        (``evidence["confirmed"]``) and not verified again on ``--resume``.

        Without an end-of-run confirmation (``confirm`` returns None: bests
        are confirmed when their first timing ranks them), a ranked best that
        was never confirmed (the re-timing ranked it after an untrusted first
        timing) is verified the same way (the evaluator's ``confirm_promoted``),
        and so is an unranked best the screening verified at a reduced scope
        only (:attr:`Node.reduced_scope`: the correct fallback ``best/`` holds
        when no timing was trusted; newcomer nc18 exported one wrong at B=127)."""
        if self.confirm is None and self.confirm_promoted is None:
            return

        def hook_for(best: Node) -> Callable[..., Any]:
            def hook(task: Any, backend: Any, sources: dict[str, str]) -> Any:
                ev = self.confirm(task, backend, sources) if self.confirm is not None else None
                if ev is None and self.confirm_promoted is not None and (best.timing_trusted or best.reduced_scope) \
                        and not self.given_start_untimed(best):
                    # an unranked best (a correct fallback, what best/ holds) is confirmed too: newcomer nc18
                    ev = self.confirm_promoted(task, backend, sources)
                return ev
            return hook

        def reload() -> CandidateTree:
            self.reload()
            return self.tree

        confirm_bests(self.store, self.tree, reload, self.task, self.backend, hook_for, "end of run",
                      on_start=lambda best: self.emit("confirming", node=best))

    def given_start_untimed(self, node: Node) -> bool:
        """Whether ``node`` is the start the run was given (``--initial``, not
        the backend's shipped kernel) on a backend that times nothing
        (``timing_meaningful`` false, e.g. triton-interp). There nothing ranks
        a rewrite above the start, so the start is the run's best whatever the
        agents made, and confirming it at the full scope verifies the user's
        own kernel, not a result of the search: left to ``kstrata export`` and
        ``kstrata eval --scope full`` (the summary calls it verified at a reduced
        scope only). Queue round rt66: a slow start (a program per row, K walked
        16 at a time) was being confirmed in Triton's interpreter for up to
        82 minutes after every call had been answered."""
        if node.parents:
            return False
        return start_left_to_export(self.backend, self.task, self.store.sources(node.hash))

    def finish(self, reason: str) -> RunResult:
        self.policy.post_search(self.tree)
        self.retime_contenders()
        self.confirm_best()
        self.store.charge("wall_s", self.elapsed(), "finish")
        best = write_outcome(self.store, self.tree, reason, self.extensions)
        spent = self.store.spent()
        self.emit("stopped", reason=reason)
        return RunResult(self.store.run_dir, best, reason, spent, self.tree)


def start_left_to_export(backend: Any, task: Any, sources: dict[str, str] | None) -> bool:
    """Whether a run of ``task`` on ``backend`` that starts from ``sources``
    leaves that start's full-scope verification to ``kstrata export`` when it
    is the best (:meth:`_Run.given_start_untimed`): the backend times nothing
    (``timing_meaningful`` false, e.g. triton-interp) and the start is not the
    backend's shipped kernel for the task (given with ``--initial``; a backend
    that ships none counts as given). False for ``sources`` None (a resumed run)."""
    if getattr(backend, "timing_meaningful", True) or sources is None:
        return False
    try:
        shipped = normalize_sources(backend.initial_sources(task))
    except Exception:  # noqa: BLE001 - no shipped start: the start was given
        return True
    return normalize_sources(sources) != shipped


#: evidence key of a confirmation that failed on kstrata's side (:class:`kstrata.sandbox.policy.SandboxUnavailable`:
#: the machine's OOM killer ended the candidate's process before its own limit, or its sandbox did not start):
#: no evidence about the candidate, so :func:`confirm_one` keeps its screening verdict, as for a timeout (newcomer
#: nc28: the quick start's final confirmation read the machine's OOM kill as the task's reference failing, and the
#: run ended with no table, no best/ and no resume command)
KSTRATA_SIDE = "kstrata_side"

def _inconclusive(rec: EvaluationRecord) -> bool:
    """A confirmation that says nothing against the candidate: a ``timeout``, or
    a failure on kstrata's side (:data:`KSTRATA_SIDE`)."""
    return rec.verdict == "timeout" or bool((rec.evidence or {}).get(KSTRATA_SIDE))


#: How many bests in a row the end-of-run confirmation verifies before it
#: stops (each failure hands the title to the next best).
MAX_CONFIRMATIONS = 3


def _evaluator_error(e: Exception, what: str) -> EvaluationRecord:
    """The ``runtime_error`` evaluation stored when the evaluator raised
    (``what``: ``"evaluation"`` or ``"confirmation"``); call inside the ``except``."""
    return EvaluationRecord(
        verdict="runtime_error", check="evaluator_exception",
        evidence={"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()},
        feedback=[{"level": None, "message": f"{what} failed: {type(e).__name__}: {e}"}],
    )


def confirm_bests(store: RunStore, tree: CandidateTree, reload: Callable[[], CandidateTree], task: Any,
                  backend: Any, hook_for: Callable[[Node], Callable[..., Any] | None], how: str,
                  on_start: Callable[[Node], None] | None = None) -> CandidateTree:
    """Verify the run's best at the full scope until one passes: ``hook_for(best)``
    gives the verifier (``None``: nothing to confirm); a best that fails there
    gets that verdict in place of its screening one and hands its rank to the
    next, at most :data:`MAX_CONFIRMATIONS` times. Each verdict is stored with
    ``evidence["confirmed"]`` and ``evidence["confirmation"] = how``; a best
    already marked is not verified again. ``reload`` reads the tree after each
    store. Returns the tree as stored afterwards."""
    for _ in range(MAX_CONFIRMATIONS):
        best = tree.best_correct()
        if best is None or _confirmed(best):
            break
        hook = hook_for(best)
        if hook is None:
            break
        if on_start is not None:
            on_start(best)
        rec = confirm_one(store, best.hash, task, backend, hook, how)
        if rec is None:
            break
        tree = reload()
        if rec.verdict == "correct" or _inconclusive(rec):
            break  # a timeout or kstrata's own failure keeps the best its title, unconfirmed (confirm_one)
    return tree


def confirmation_record(hook: Callable[..., Any], task: Any, backend: Any, sources: dict[str, str],
                        how: str) -> EvaluationRecord | None:
    """The verdict of ``hook(task, backend, sources)`` (a full-scope
    verification) as a record marked ``evidence["confirmed"]`` and
    ``evidence["confirmation"] = how``; an exception of the hook is an
    ``evaluator_exception`` verdict. None when the hook had nothing to verify
    (it returned None).

    Raises
    ------
    kstrata.tasks.errors.ReferenceFailure
        When the task's own reference cannot be verified at the full scope
        (the task's fault, not the candidate's: no verdict is stored)."""
    try:
        ev = hook(task, backend, sources)
        if ev is None:
            return None
        rec = to_evaluation_record(ev)
    except ReferenceFailure:
        raise
    except SandboxUnavailable as e:  # kstrata's side (machine out of memory, a sandbox that did not start)
        rec = _evaluator_error(e, "confirmation")
        rec.evidence[KSTRATA_SIDE] = True
    except Exception as e:  # noqa: BLE001 - errors are data
        rec = _evaluator_error(e, "confirmation")
    kept = rec.evidence if isinstance(rec.evidence, dict) else ({} if rec.evidence is None
                                                               else {"screening": rec.evidence})
    rec.evidence = {**kept, "confirmed": rec.verdict == "correct", "confirmation": how}
    return rec


def confirm_one(store: RunStore, digest: str, task: Any, backend: Any, hook: Callable[..., Any],
                how: str) -> EvaluationRecord | None:
    """:func:`confirmation_record` for candidate ``digest``, stored in place of
    its screening verdict. Returns the confirmation's record, or None (nothing
    to verify).

    A confirmation that ended in ``timeout`` is not evidence that the
    candidate is wrong (a busy machine, or a limit too short for an
    interpreter): its screening verdict stays, with the timeout recorded in
    its evidence under :data:`CONFIRMATION_TIMEOUT` (``how``, the message,
    the check), so it stays verified at the reduced scope only and a later
    confirmation (``kstrata export``, perhaps with a longer ``--timeout``)
    can still pass. Newcomer nc24: a correct Triton kernel's confirmation by
    ``kstrata export`` timed out at load 10, the run stored ``timeout`` for
    good, and every later export refused it."""
    rec = confirmation_record(hook, task, backend, store.sources(digest), how)
    if rec is None:
        return None
    if _inconclusive(rec):
        screening = next((c.evaluation for c in store.candidates() if c.hash == digest), None)
        if screening is not None and screening.verdict == "correct":
            evidence = dict(screening.evidence) if isinstance(screening.evidence, dict) else {}
            note = rec.evidence if isinstance(rec.evidence, dict) else {}
            evidence[CONFIRMATION_TIMEOUT] = {"by": how, "check": rec.check,
                                              "message": str(note.get("message") or note.get("error") or "")[:500]}
            screening.evidence = evidence
            store.replace_evaluation(digest, screening)
            return rec
    store.replace_evaluation(digest, rec)
    return rec


def confirm_ranked_best(store: RunStore, task: Any, backend: Any, confirm: Callable[..., Any] | None,
                        how: str) -> CandidateTree:
    """:func:`confirm_bests` for a ranked best that was never verified at the
    full scope (``confirm``: an evaluator's ``confirm_promoted``). ``kstrata
    retime`` calls this after re-timing, which can rank a candidate only the
    screening verified (red-team round of 2026-12-03)."""
    def reload() -> CandidateTree:
        return CandidateTree.from_store(store, with_sources=False)

    return confirm_bests(store, reload(), reload, task, backend,
                         lambda best: confirm if confirm is not None and (best.timing_trusted or best.reduced_scope)
                         else None, how)


def _confirmed(node: Node) -> bool | None:
    evidence = getattr(node.record.evaluation, "evidence", None)
    return evidence.get("confirmed") if isinstance(evidence, dict) and "confirmation" in evidence else None


def _timed_out_by(node: Node) -> str | None:
    """Which confirmation of ``node`` at the full scope timed out (:data:`CONFIRMATION_TIMEOUT`), else None."""
    evidence = getattr(node.record.evaluation, "evidence", None)
    note = evidence.get(CONFIRMATION_TIMEOUT) if isinstance(evidence, dict) else None
    return str(note.get("by") or "a confirmation") if isinstance(note, dict) else None


def _best_confirmed(best: Node, tree: CandidateTree) -> bool | None:
    """:func:`_confirmed` of the best; in a run that confirmed at its end, a best
    never reached by the confirmation is ``False``, not unknown."""
    mark = _confirmed(best)
    if mark is None and any(_confirmed(n) is not None for n in tree):
        return False
    return mark


def timing_shape_of(config: dict[str, Any]) -> dict[str, int] | None:
    """The timing shape a run's ``config.json`` records (``cli.timing_shape``;
    ``None`` when the run was started without one)."""
    shape = (config.get("cli") or {}).get("timing_shape")
    if isinstance(shape, str):
        shape = json.loads(shape)
    return {k: int(v) for k, v in shape.items()} if shape else None


def write_outcome(store: RunStore, tree: CandidateTree, stop_reason: str,
                  extensions: dict[str, str] | None = None) -> Node | None:
    """Write ``RUN/best/`` (the best candidate's sources) and ``RUN/summary.json``
    from ``tree``; the end of :func:`optimize`, and again after ``kstrata retime``
    changed timings. Returns the best node (``None`` when none is correct)."""
    best = tree.best_correct()
    written = set()
    if best is not None:
        for level, text in store.sources(best.hash).items():
            name = artifacts.source_name(level, extensions or {})
            artifacts.write_in_run(store.run_dir, store.run_dir / "best" / name, text)
            written.add(name)
    # an earlier best's files go (a confirmation or re-timing that took the title from it, or left no
    # correct candidate, must not leave its kernel in best/ under the new name or none)
    folder = store.run_dir / "best"
    if folder.is_dir() and not folder.is_symlink():
        for old in folder.iterdir():
            if old.name not in written and (old.is_file() or old.is_symlink()):
                old.unlink()
        if not written and not any(folder.iterdir()):
            folder.rmdir()
    summary = {
        "stop_reason": stop_reason,
        "best": None if best is None else {  # an unranked best (every timing untrusted) claims no speedup
            "hash": best.hash, "speedup": best.speedup if best.timing_trusted else None,
            "roofline_fraction": best.roofline_fraction,
            # verified by the full protocol at the end of the run (False: it failed or was not reached;
            # None: confirmed as a would-be best during the search, or no confirmation asked for)
            "confirmed": _best_confirmed(best, tree),
            # verified at the search's reduced scope only, never confirmed at the full scope (Node.reduced_scope)
            "reduced_scope": best.reduced_scope is not None,
            # its full-scope confirmation timed out (confirm_one kept it as screened): what said so
            "full_scope_timeout": _timed_out_by(best),
            "speedups": [s.__dict__ for s in best.measurement.speedups]
            if best.measurement and best.timing_trusted else [],
        },
        # the shape every speedup above was measured at (None: the backend's own choice, e.g. a test)
        "timing_shape": timing_shape_of(store.config),
        # whether anything was timed at all (an interpreter backend times nothing: correctness only)
        "timed": any(n.record.measurement is not None for n in tree),
        "spent": store.spent(),
        "candidates": len(tree),
        "verdicts": tree.verdict_counts(),
        # of the correct ones, those verified at the search's reduced scope only (Node.reduced_scope)
        "correct_at_reduced_scope": sum(1 for n in tree if n.reduced_scope),
        "lookahead": tree.lookahead_stats(),
        "unranked": tree.unranked(),
        # each timed candidate's readings as a digest: an export is stale when its candidate's changes
        "readings": tree.readings(),
    }
    artifacts.write_atomic(store.run_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    return best


def other_run(config: dict[str, Any], task: Any, backend: Any, run_dir: Any) -> str | None:
    """Why ``--resume run_dir`` cannot continue a run whose stored ``config``
    is of another task (by digest) or backend than ``task`` on ``backend``, or
    None when it is theirs. The message ends with the command that resumes it,
    each word quoted: the config is run-directory data anyone could have
    edited, and a task path like ``x.py; curl ... | sh`` stays one argument
    when the line is pasted (red team rt51)."""

    was = config.get("task") if isinstance(config.get("task"), dict) else {}
    was_backend = config.get("backend")
    if was.get("digest") == task.digest and was_backend == backend.name:
        return None
    where = was.get("path") or was.get("name")
    now = str(getattr(task, "path", "") or "")
    if was.get("name") == task.name and was_backend == backend.name:
        # the same task by name, another text (newcomer nc16: "a run of scaled_tanh on triton-interp, not
        # scaled_tanh on triton-interp"): what it verified against is not what the file says now
        if now and was.get("path") and Path(now).resolve() != Path(str(was["path"])).resolve():
            return (f"{run_dir} is a run of the task file {was['path']}, and {now} differs from it; resume it "
                    f"with: {resume_command(was['path'], was_backend, run_dir)}")
        return (f"the task file {where} changed since {run_dir} started (the run verified every candidate "
                f"against its earlier text); restore the file's earlier text to resume it, or start a new run "
                f"of the changed task with --out DIR")
    text = f"{run_dir} is a run of {was.get('name')} on {was_backend}, not {task.name} on {backend.name}"
    if where and was_backend:
        text += f"; resume it with: {resume_command(where, was_backend, run_dir)}"
    return text


def _proposer_levels(levels: tuple[str, ...], proposer: Any) -> tuple[str, ...]:
    """The backend's ``levels`` the policy expands: those the proposer edits
    where it says (its ``levels``; the built-in TileLang tuner edits
    ``schedule`` only), so a run neither spends expansions on levels it never
    changes nor names them when it stops (newcomer nc20: "expanded 1x at each
    of its levels (graph, schedule, source)"); all of them otherwise."""
    own = getattr(proposer, "levels", None)
    narrowed = tuple(lv for lv in levels if own and lv in own)
    return narrowed or levels


def optimize(
    task: Any,
    backend: Any,
    proposer: Proposer,
    evaluator: Evaluator | Callable[..., tuple[Any, Any]],
    policy: Policy | str = "greedy",
    budget: Budget | None = None,
    run_dir: str | Path = "run",
    resume: bool = False,
    *,
    settings: SearchSettings | None = None,
    router: Router | None = None,
    initial_sources: dict[str, str] | None = None,
    progress: Callable[[str, dict], None] | None = None,
    extra_config: dict[str, Any] | None = None,
) -> RunResult:
    """Grow a tree of candidates for ``task`` on ``backend`` until a stop rule fires.

    Parameters
    ----------
    task:
        A :class:`kstrata.tasks.base.Task` (anything with ``name`` and ``digest``).
    backend:
        A :class:`kstrata.backends.base.Backend` or its registry name; uses
        ``name``, ``levels``, ``initial_sources(task)`` and optionally
        ``source_extensions`` (``{level: file extension}``).
    proposer:
        See :class:`kstrata.agents.base.Proposer`.
    evaluator:
        See :class:`Evaluator`.
    policy:
        A :class:`~kstrata.search.policies.Policy` or a name from
        :data:`~kstrata.search.policies.POLICIES`.
    budget:
        Hard limits and stopping rules (default :class:`Budget()`: 100 evaluations).
    run_dir:
        The run directory (created; must not hold a run unless ``resume``).
    resume:
        Continue the run in ``run_dir``; ``budget`` may be larger than before.
    settings:
        Seed and lookahead, see :class:`SearchSettings`.
    router:
        Level router for expansions whose policy names no level
        (default :func:`~kstrata.search.policies.default_router`).
    initial_sources:
        The root's sources (default ``backend.initial_sources(task)``).
    progress:
        Called as ``progress(event, info)`` with ``event`` in ``evaluating``
        and ``proposing`` (a step starts), ``evaluated``, ``expanded``,
        ``retiming`` (the end-of-run round), ``stopped`` and ``info`` holding ``tree``, ``spent``
        and event details (for a live display).
    extra_config:
        More resolved configuration to save in the run (e.g. the CLI's).

    Returns
    -------
    RunResult

    Raises
    ------
    StoreError
        If ``run_dir`` holds a run and ``resume`` is false, or ``resume`` is
        true and it holds none or one for another task or backend.
    NotImplementedError
        If no ``initial_sources`` are given and the backend has none for the task.
    """
    backend = _backend_object(backend)
    policy = make_policy(policy)
    budget = budget or Budget()
    settings = settings or SearchSettings()
    config = {
        "task": {"name": task.name, "digest": task.digest, "path": str(getattr(task, "path", ""))},
        "backend": backend.name,
        "proposer": proposer.name,
        "policy": {"name": policy.name, **policy.params()},
        "budget": budget.to_dict(),
        "settings": asdict(settings),
        **(extra_config or {}),
    }
    if not resume:
        RunStore.check_new(run_dir)  # before the lock file: nothing is written into a folder that is refused
        Path(run_dir).mkdir(parents=True, exist_ok=True)
    elif not RunStore.exists(run_dir):
        raise StoreError(no_run_here(run_dir))  # before a lock file is made there
    with run_lock(run_dir, "kstrata optimize"):  # one writer per run (a second --resume is refused)
        if resume:
            store = RunStore.open(run_dir)
            mismatch = other_run(store.config, task, backend, run_dir)
            if mismatch:
                store.close()
                raise StoreError(mismatch)
            settings = SearchSettings(**{**asdict(settings), "seed": store.seed})
            if store.config.get("budget") != budget.to_dict():  # a resume's budget is the run's total
                store.update_config({"budget": budget.to_dict()})
        else:
            store = RunStore.create(run_dir, config, seed=settings.seed)
        with store:
            run = _Run(task, backend, proposer, evaluator, policy, budget, settings, store,
                       router or default_router, progress)
            run.seed_root(initial_sources)
            policy.pre_search(run.tree, _proposer_levels(run.levels, proposer))
            while True:
                stop = run.evaluate_pending() or run.unfixable_start() or run.stop_reason()
                if stop:
                    return run.finish(stop)
                la = run.lookahead()
                if la is not None:
                    run.expand(la[0], "lookahead", la[1])
                    continue
                rng = random.Random(f"{settings.seed}:{len(run.tree.expansion_log)}")
                exp = policy.select(run.tree, rng)
                if exp is None:
                    return run.finish(run.exhausted_reason())
                run.expand(exp, "policy", None)
