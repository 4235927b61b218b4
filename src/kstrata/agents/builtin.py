"""The built-in, deterministic proposer for TVM candidates (no LLM).

At the ``schedule`` level it applies the rules library
(:mod:`kstrata.backends.tvm.rules`: whole-PrimFunc recipes ``fuse_rows`` and
``gemm_tile`` first, then single steps: multi-level tiling, loop order,
parallel/vectorize/unroll, cache stages, inlining, GPU thread binding) to the
candidate's lowered PrimFuncs and proposes a seeded sample of the variants
that replay cleanly; once per graph it also hands the parameter search to
MetaSchedule (a small trial budget) and proposes the tuned schedule. At the
``graph`` level it proposes the other fusion choices, keeping the schedule so
re-lowering replays what still applies. It never edits the ``source`` level
(that is the source agent's job), so the router sends it elsewhere.

It is the default proposer and the baseline the LLM agents are compared with.
"""

from __future__ import annotations

import random
from typing import Any

from kstrata.agents.base import Proposal, ProposalBatch, ProposeContext


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
    """

    name = "builtin"
    levels = ("graph", "schedule")

    def __init__(self, backend: Any, per_expansion: int = 4, tune_trials: int = 16):
        self.backend = backend
        self.per_expansion = per_expansion
        self.tune_trials = tune_trials
        self._tuned_graphs: set[str] = set()

    def propose(self, task: Any, candidate: Any, feedback: Any, level: str, *,
                context: ProposeContext) -> ProposalBatch:
        """Proposals at ``level`` (``[]`` for ``source``)."""
        sources = {k: v for k, v in dict(candidate.sources).items() if k != "source"}
        if level == "graph":
            return ProposalBatch(self._graph(sources))
        if level == "schedule":
            rng = random.Random(f"{context.seed}:{context.step}:{candidate.hash if hasattr(candidate, 'hash') else ''}")
            return ProposalBatch(self._schedule(task, sources, rng, context))
        return ProposalBatch([])

    def _graph(self, sources: dict[str, str]) -> list[Proposal]:
        from kstrata.backends.tvm.rules import graph_variants

        return [
            Proposal.edit(sources, "graph", v.text, role="graph-rules",
                          rationale=v.description, metadata={"rule": v.rule, "tiling_class": "graph:" + v.rule})
            for v in graph_variants(sources["graph"])
        ]

    def _schedule(self, task: Any, sources: dict[str, str], rng: random.Random,
                  context: ProposeContext) -> list[Proposal]:
        from kstrata.backends.tvm.rules import COMPOSITE, schedule_variants

        shape = task.nominal_shape
        lowered = self.backend.lower(task, sources, shape)
        variants = schedule_variants(lowered.funcs, sources.get("schedule", ""),
                                     gpu=bool(getattr(self.backend, "gpu_like", False)))
        # whole-PrimFunc recipes first (in rule order), then a seeded shuffle of the single steps
        def is_recipe(v: Any) -> bool:  # a recipe, or recipes on several PrimFuncs ("a+b")
            return all(r in COMPOSITE for r in v.rule.split("+"))

        composite = [v for v in variants if is_recipe(v)]
        single = [v for v in variants if not is_recipe(v)]
        rng.shuffle(single)
        variants = composite + single
        out = [
            Proposal.edit(sources, "schedule", v.text, role="schedule-rules",
                          rationale=f"{v.rule} on {v.func}: {v.description}",
                          metadata={"rule": v.rule, "func": v.func, "tiling_class": v.rule})
            for v in variants[: self.per_expansion]
        ]
        graph = sources.get("graph", "")
        if self.tune_trials and graph not in self._tuned_graphs and self.backend.name == "tvm-llvm":
            self._tuned_graphs.add(graph)
            tuned = self._tune(task, sources, self._tune_shape(task))
            if tuned is not None:
                out.insert(0, tuned)
        return out

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

    def _tune(self, task: Any, sources: dict[str, str], shape: dict[str, int]) -> Proposal | None:
        """MetaSchedule as the parameter layer: its best schedule for this graph."""
        from kstrata.backends.tvm.tune import tune

        try:
            result = tune(task, shape, self.backend.name, trials=self.tune_trials, sources=sources)
        except Exception:  # noqa: BLE001 - a tuner failure only means no tuned proposal
            return None
        return Proposal.edit(sources, "schedule", result.sources["schedule"], role="metaschedule",
                             rationale=f"MetaSchedule, {self.tune_trials} trials, for this graph",
                             metadata={"rule": "metaschedule", "tiling_class": "metaschedule"})
