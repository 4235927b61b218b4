"""The built-in, deterministic proposers (no LLM), one per backend family.

:func:`for_backend` picks it: :class:`TVMRulesProposer` for ``tvm-*``,
:class:`TritonTuneProposer` for ``triton``/``triton-interp`` and
:class:`TileLangTuneProposer` for ``tilelang-*``.

TVM

At the ``schedule`` level it applies the rules library
(:mod:`kstrata.backends.tvm.rules`: whole-PrimFunc recipes ``fuse_rows`` and
``gemm_tile`` first, then single steps: multi-level tiling, loop order,
parallel/vectorize/unroll, cache stages, inlining, GPU thread binding) to the
candidate's lowered PrimFuncs and proposes a seeded sample of the variants
that replay cleanly (on GPU targets the thread-bound recipes of
:mod:`kstrata.backends.tvm.gpu_rules` instead); once per graph it also hands
the parameter search to MetaSchedule (a small trial budget; on tvm-cuda where
the GPU is usable) and proposes the tuned schedule. The
candidate may be an LLM's (``--proposer hierarchical``, or a resumed run), so
the lowering, the rules' replay of its schedule and the tuning all run in one
sandboxed process per expansion
(:func:`kstrata.backends.tvm.isolated.schedule_expansion`, cached by graph and
schedule text); kstrata's own process only orders and samples the variants'
texts. At the
``graph`` level it proposes the other fusion choices, keeping the schedule so
re-lowering replays what still applies. It never edits the ``source`` level
(that is the source agent's job), so the router sends it elsewhere.

It is the default proposer and the baseline the LLM agents are compared with.
"""

from __future__ import annotations

import math
import random
from typing import Any

from kstrata.agents.base import Proposal, ProposalBatch, ProposeContext
from kstrata.search.candidate import normalize_source


def for_backend(backend: Any) -> Any:
    """The built-in proposer for ``backend``, or ``None`` when its family has no rules."""
    name = backend.name
    if name.startswith("tvm-"):
        return TVMRulesProposer(backend)
    if name in ("triton", "triton-interp"):
        return TritonTuneProposer(backend)
    if name.startswith("tilelang-"):
        return TileLangTuneProposer(backend)
    return None


def _run_texts(context: ProposeContext, levels: tuple[str, ...]) -> set[tuple[str, ...]]:
    """The normalized texts of ``levels`` (``""`` where absent) of every
    candidate in the run's tree (empty without a tree)."""
    tree = getattr(context, "tree", None)
    out = set()
    for node in tree if tree is not None else ():
        texts = getattr(node, "sources", None) or {}
        if any(level in texts for level in levels):
            out.add(tuple(normalize_source(texts.get(level, "")) for level in levels))
    return out


def _element_bytes(task: Any) -> int | None:
    """Bytes per element of ``task``'s declared dtype (``task.meta.dtype``), ``None`` when unknown."""
    from kstrata.sandbox.wire import DTYPES

    try:
        return DTYPES.get(str(task.meta.dtype))
    except AttributeError:
        return None


def _rng(context: ProposeContext, candidate: Any) -> random.Random:
    return random.Random(f"{context.seed}:{context.step}:{getattr(candidate, 'hash', '')}")


class TVMRulesProposer:
    """Rule-based schedule and graph proposals for a ``tvm-*`` backend.

    Parameters
    ----------
    backend:
        A :class:`kstrata.backends.tvm.backend.TVMBackend`.
    per_expansion:
        Schedule variants proposed per expansion (a seeded sample of all that apply).
    tune_trials:
        MetaSchedule trials for the one tuning proposal per graph (0 = never tune).
    per_rewrite:
        Schedule variants proposed with each graph rewrite that applies, ahead of
        the expansion's own (:meth:`_rewritten`; 0 = none).
    """

    name = "builtin"
    levels = ("graph", "schedule")
    #: schedules and fusion choices keep the candidate's meaning: an incorrect start stays incorrect
    #: (the search stops there, :meth:`kstrata.search.loop._Run.unfixable_start`)
    repairs = False

    def __init__(self, backend: Any, per_expansion: int = 4, tune_trials: int = 16, per_rewrite: int = 2):
        self.backend = backend
        self.per_expansion = per_expansion
        self.per_rewrite = per_rewrite
        self.tune_trials = tune_trials
        self._tuned_graphs: set[str] = set()

    def propose(self, task: Any, candidate: Any, feedback: Any, level: str, *,
                context: ProposeContext) -> ProposalBatch:
        """Proposals at ``level`` (``[]`` for ``source``)."""
        sources = {k: v for k, v in dict(candidate.sources).items() if k != "source"}
        if level == "graph":
            return ProposalBatch(self._graph(task, sources))
        if level == "schedule":
            return ProposalBatch(self._schedule(task, sources, _rng(context, candidate), context))
        return ProposalBatch([])

    def _graph(self, task: Any, sources: dict[str, str]) -> list[Proposal]:
        """The graph rules' variants. A candidate whose schedule names PrimFuncs
        gets it replayed on each new graph first, in a sandboxed process
        (:func:`kstrata.backends.tvm.isolated.replay_after_graph_change`, as the
        LLM graph agent does; its report in ``metadata["replay"]``): a fusion
        change renames PrimFuncs (rmsnorm's ``fused_mean_...`` is
        ``fused_power_fused_mean_...`` under ``rows``), and the parent's schedule
        kept as it was named one that no longer exists (a quick start's
        compile_error, runs/rmsnorm-tvm-llvm-e405e3)."""
        import re

        from kstrata.backends.tvm.isolated import replay_after_graph_change
        from kstrata.backends.tvm.rules import graph_variants

        # a target that builds per shape anyway (GPU targets) gains nothing from the build switch
        symbolic = getattr(self.backend, "symbolic_builds", True)
        scheduled = bool(re.search(r"^def schedule_\w+\(", sources.get("schedule", ""), re.MULTILINE))
        out = []
        for v in graph_variants(sources["graph"], gpu=bool(getattr(self.backend, "gpu_like", False))):
            if not symbolic and v.rule == "build":
                continue
            new, meta = {**sources, "graph": v.text}, {"rule": v.rule, "tiling_class": "graph:" + v.rule}
            if scheduled:
                new["schedule"], meta["replay"] = replay_after_graph_change(task, new, sources["schedule"],
                                                                            self.backend.name)
            out.append(Proposal(sources=new, level="graph", role="graph-rules", rationale=v.description,
                                metadata=meta))
        return out

    def _schedule(self, task: Any, sources: dict[str, str], rng: random.Random,
                  context: ProposeContext) -> list[Proposal]:
        """The rules' variants (and once per graph MetaSchedule's schedule), made
        in one sandboxed process.

        Raises
        ------
        kstrata.sandbox.IsolatedCallError
            When the candidate's graph does not lower (or its schedule does not
            parse) there, or the sandboxed process failed: the expansion's error.
        """
        from kstrata.backends.tvm.isolated import schedule_expansion
        from kstrata.backends.tvm.rules import COMPOSITE

        graph = sources.get("graph", "")
        want_tune = bool(self.tune_trials) and graph not in self._tuned_graphs and self._can_tune()
        tune = {"shape": self._tune_shape(task), "trials": self.tune_trials} if want_tune else None
        variants, tuned = schedule_expansion(task, sources, self.backend.name,
                                             gpu=bool(getattr(self.backend, "gpu_like", False)), tune=tune)
        # whole-PrimFunc recipes first (in rule order), then a seeded shuffle of the single steps
        def is_recipe(v: dict[str, str]) -> bool:  # a recipe, or recipes on several PrimFuncs ("a+b")
            return all(r in COMPOSITE for r in v["rule"].split("+"))

        composite = [v for v in variants if is_recipe(v)]
        single = [v for v in variants if not is_recipe(v)]
        rng.shuffle(single)
        # a variant the run already has (a recipe proposed again from a sibling, the
        # same first recipes of a node expanded twice) takes no slot
        have = _run_texts(context, ("graph", "schedule"))
        variants = [v for v in composite + single
                    if (normalize_source(graph), normalize_source(v["text"])) not in have]
        out = [
            Proposal.edit(sources, "schedule", v["text"], role="schedule-rules",
                          rationale=f"{v['rule']} on {v['func']}: {v['description']}",
                          metadata={"rule": v["rule"], "func": v["func"], "tiling_class": v["rule"]})
            for v in variants[: self.per_expansion]
        ]
        if want_tune:
            self._tuned_graphs.add(graph)
            if tuned is not None:
                out.insert(0, self._tuned_proposal(sources, tuned))
        return self._rewritten(task, sources, have) + out

    def _rewritten(self, task: Any, sources: dict[str, str], have: set[tuple[str, ...]]) -> list[Proposal]:
        """The graph rewrites that apply to the candidate's graph
        (:func:`kstrata.backends.tvm.graph_rules.rewrites`: the log-softmax that
        only a gather reads, ``x ** 2``), each with the first
        :attr:`per_rewrite` schedule variants of the new graph (its expansion
        from the default schedule, in the rules' order: on a GPU target the
        costliest PrimFunc's row schedules first), as ``graph`` proposals that
        the schedule expansion offers before its own variants: they remove
        passes over memory or work per element that no schedule of the old
        graph can (cross_entropy's B x C log-softmax written and not read;
        ``powf`` per element in rmsnorm), and the search has few evaluations
        on a lent GPU. A rewrite whose expansion fails offers nothing; on a CPU
        target (not ``gpu_like``) none is offered here."""
        from kstrata.backends.tvm.graph_rules import rewrites
        from kstrata.backends.tvm.isolated import schedule_expansion
        from kstrata.backends.tvm.schedule import render_schedule
        from kstrata.sandbox import IsolatedCallError

        if not self.per_rewrite or not getattr(self.backend, "gpu_like", False):
            return []  # a CPU search has the evaluations to reach them at the graph level
        out = []
        for rule, graph, desc in rewrites(sources.get("graph", ""), gpu=True):
            base = {**sources, "graph": graph, "schedule": render_schedule({}, "after the graph rule " + rule)}
            try:
                variants, _ = schedule_expansion(task, base, self.backend.name, gpu=True)  # gpu_like, above
            except IsolatedCallError:
                continue
            fresh = [v for v in variants if (normalize_source(graph), normalize_source(v["text"])) not in have]
            for v in fresh[:self.per_rewrite]:
                out.append(Proposal(sources={**base, "schedule": v["text"]}, level="graph", role="graph-rules",
                                    rationale=f"{rule}: {desc}; then {v['rule']} on {v['func']}: {v['description']}",
                                    metadata={"rule": f"{rule}+{v['rule']}", "func": v["func"],
                                              "tiling_class": "graph:" + rule}))
        return out

    def _can_tune(self) -> bool:
        """Whether MetaSchedule can measure here: on tvm-llvm always; on
        tvm-cuda only where its GPU is usable (its runner times on the device;
        the tuning runs in the expansion's sandboxed process like on the CPU)."""
        if self.backend.name == "tvm-llvm":
            return True
        return self.backend.name == "tvm-cuda" and bool(self.backend.availability().usable)

    def _tune_shape(self, task: Any) -> dict[str, int]:
        """Where MetaSchedule tunes: the CPU-fitted shape on CPU targets (the
        GPU-sized nominal shape costs minutes per trial there), else nominal."""
        from kstrata.tasks.scaling import ShapeFitError, auto_shape_option, fitted_shape

        if auto_shape_option(getattr(self.backend, "device", "cpu")) == "fit":
            try:
                return fitted_shape(task)
            except ShapeFitError:
                pass
        return task.nominal_shape

    def _tuned_proposal(self, sources: dict[str, str], tuned: dict[str, Any]) -> Proposal:
        """MetaSchedule as the parameter layer: its best schedule for this graph
        (tuned in the sandbox by :func:`kstrata.backends.tvm.isolated.schedule_expansion`)."""
        return Proposal.edit(sources, "schedule", tuned["sources"]["schedule"], role="metaschedule",
                             rationale=f"MetaSchedule, {self.tune_trials} trials, for this graph",
                             metadata={"rule": "metaschedule", "tiling_class": "metaschedule"})



class _TuneProposer:
    """The DSL tuners' shared shape: moves at one level, at most
    ``per_expansion`` per expansion, seeded per step and candidate."""

    name = "builtin"
    level = ""
    #: moves change tunable parameters only: an incorrect start stays incorrect (the search stops there)
    repairs = False

    def __init__(self, backend: Any, per_expansion: int = 8):
        self.backend = backend
        self.per_expansion = per_expansion
        self.levels = (self.level,)

    def propose(self, task: Any, candidate: Any, feedback: Any, level: str, *,
                context: ProposeContext) -> ProposalBatch:
        """Moves of ``candidate`` at this proposer's level (``[]`` at other levels)."""
        sources = dict(candidate.sources)
        if level != self.level or "source" not in sources:
            return ProposalBatch([])
        moves = self._moves(sources, _rng(context, candidate), self._seen(context),
                            geometry=self._geometry(task, context), element_bytes=_element_bytes(task))
        if not moves:  # said in `kstrata tree` (declined at LEVEL), not a silent empty expansion
            from kstrata.agents.closed import skipped

            return skipped(self.level, self._why_no_moves(sources))
        held = self._held(sources)  # tunables left alone, and why (in each proposal's record)
        return ProposalBatch([
            Proposal.edit(sources, self.level, text, role=role, rationale=why,
                          metadata={"rule": rule, "params": params,
                                    "tiling_class": rule if rule != "tune" else "tune:" + next(iter(params)),
                                    **({"not_tuned": held} if held else {})})
            for text, rule, why, params, role in moves
        ])

    def _held(self, sources: dict[str, str]) -> list[str]:
        """Why each tunable of this candidate the tuner leaves alone was held back (one line each)."""
        return []

    def _why_no_moves(self, sources: dict[str, str]) -> str:
        """Why this candidate got no proposal (shown as the expansion's decline)."""
        return ("the built-in tuner has no move left on this candidate: every setting of its tunables it "
                "would propose is already in the run; an LLM proposer (--proposer llm) can change the code")

    def _geometry(self, task: Any, context: ProposeContext) -> tuple[int, int] | None:
        """The problem size the proposals are ranked for (``None``: not ranked)."""
        return None

    def _seen(self, context: ProposeContext) -> frozenset[str]:
        """This level's texts of the run's candidates (so a sweep's absolute
        settings, proposed again from another node, take no slot)."""
        return frozenset(t for (t,) in _run_texts(context, (self.level,)))

    def _moves(self, sources: dict[str, str], rng: random.Random, seen: frozenset[str] = frozenset(),
               geometry: tuple[int, int] | None = None,
               element_bytes: int | None = None) -> list[tuple[str, str, str, dict, str]]:
        """``(new text of the level, rule, rationale, {param: value}, role)`` per
        proposal, none whose text is in ``seen``; ``geometry`` as :meth:`_geometry`;
        ``element_bytes`` the task's element size (bytes; ``None`` when unknown)."""
        raise NotImplementedError


class TritonTuneProposer(_TuneProposer):
    """The autotuner layer for ``triton``/``triton-interp``: text edits of the
    ``source`` level (:mod:`kstrata.backends.triton.tune_rules`).

    Each expansion proposes the mechanical structural variants that apply
    (rows per program, a launch configuration), then autotune-style sweep
    configurations (several tunables at once), then one-parameter moves of
    the candidate's tunables (marked ``# kstrata-tune:`` constants, or
    literal block sizes / ``num_warps`` / ``num_stages`` detected at launch
    sites), nearest moves first, interleaved across parameters, all ranked
    for the problem size the run times at
    (:func:`kstrata.backends.triton.tune_rules.rank_for_shape`: two passes or
    more warps for long rows, several rows per program for short ones); the greedy
    policy expanding the best node then climbs coordinate by coordinate. A
    text some candidate of the run already has is not proposed again. The
    candidate's text is never imported, executed or parsed here.

    Parameters
    ----------
    backend:
        The Triton backend.
    per_expansion:
        Proposals per expansion at most.
    """

    level = "source"

    def _geometry(self, task: Any, context: ProposeContext) -> tuple[int, int] | None:
        """``(rows, row_len)`` at the run's timing shape (the nominal shape when
        none was recorded), read from the shape's sizes alone: the last size
        variable is the row (the suite's convention: ``(B, D)``, ``(B, C)``),
        the product of the others the rows. The task file is not loaded here
        (kstrata's own process evaluates no user or candidate file); it only
        orders the proposals. ``None`` without sizes."""
        try:
            shape = dict(context.timing_shape) if context.timing_shape else dict(task.nominal_shape)
        except Exception:  # noqa: BLE001 - a task without shapes is not ranked
            return None
        sizes = [int(v) for v in shape.values() if isinstance(v, int) and v > 0]
        return (math.prod(sizes[:-1]), sizes[-1]) if sizes else None

    def _held(self, sources: dict[str, str]) -> list[str]:
        """Launch constexprs the tuner leaves alone since a grid holds their
        value apart from them (:func:`kstrata.backends.triton.tune_rules.held_tunables`)."""
        from kstrata.backends.triton.tune_rules import held_tunables

        return held_tunables(sources["source"])

    def _why_no_moves(self, sources: dict[str, str]) -> str:
        """The grid reasons of :meth:`_held` where they left nothing to move."""
        held = self._held(sources)
        if held:
            return ("the built-in tuner leaves this kernel's tunables alone: " + "; ".join(held)
                    + "; or use an LLM proposer (--proposer llm)")
        return super()._why_no_moves(sources)

    def _moves(self, sources: dict[str, str], rng: random.Random, seen: frozenset[str] = frozenset(),
               geometry: tuple[int, int] | None = None,
               element_bytes: int | None = None) -> list[tuple[str, str, str, dict, str]]:
        from kstrata.backends.triton.tune_rules import variants

        tuning = ("tune", "sweep")
        return [(v.text, v.rule, v.description, v.params, "triton-tune" if v.rule in tuning else "triton-structural")
                for v in variants(sources["source"], rng, self.per_expansion, exclude=seen, shape=geometry,
                                  element_bytes=element_bytes)]


class TileLangTuneProposer(_TuneProposer):
    """The parameter layer for ``tilelang-*``: one-parameter moves of the
    ``schedule`` level (JSON overrides of the kernel's ``SCHEDULE``) over the
    choices its ``# kstrata-tune:`` comment declares for the backend's target
    (:mod:`kstrata.backends.tilelang.tune_rules`); the source text is only
    read with regular expressions, never executed or parsed.

    Parameters
    ----------
    backend:
        The TileLang backend.
    per_expansion:
        Proposals per expansion at most.
    """

    level = "schedule"

    def _moves(self, sources: dict[str, str], rng: random.Random, seen: frozenset[str] = frozenset(),
               geometry: tuple[int, int] | None = None,
               element_bytes: int | None = None) -> list[tuple[str, str, str, dict, str]]:
        from kstrata.backends.tilelang.tune_rules import schedule_variants

        target = getattr(self.backend, "target", "")
        return [(text, "tune", why, params, "tilelang-tune")
                for text, why, params in schedule_variants(sources["source"], sources.get("schedule", ""),
                                                           target, rng, self.per_expansion)]

    def _why_no_moves(self, sources: dict[str, str]) -> str:
        from kstrata.backends.tilelang.tune_rules import SYNTAX, declared, malformed

        target = getattr(self.backend, "target", "")
        bad = malformed(sources["source"])
        if bad:
            return (f"the built-in tuner cannot read this kernel's `# kstrata-tune:` marker: {'; '.join(bad)}; "
                    "fix it, or use an LLM proposer (--proposer llm)")
        if not declared(sources["source"], target):
            return (f"the built-in tuner has nothing to tune on this kernel for target {target!r}: its SCHEDULE "
                    f"line declares no `# kstrata-tune:` choices for it; add them at the end of that line, e.g. "
                    f"`{SYNTAX}` (`on cuda`: tuned on GPUs only), or use an LLM proposer (--proposer llm)")
        return super()._why_no_moves(sources)
