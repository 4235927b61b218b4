"""A single-role LLM proposer: one agent that may edit any level.

It builds the prompt from public material only (:class:`PromptContext`), asks
the provider, parses the answer (whole block or SEARCH/REPLACE edits) and, if
the answer is malformed, retries with the parse error as feedback; every call,
retries included, is returned for the store and charged to the budget.
The per-level roles of the hierarchical agent build on this class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstrata.agents.base import Proposal, ProposalBatch, ProposeContext
from kstrata.agents.knowledge import spec_for_backend
from kstrata.agents.parse import ParseError, answer_to_sources, parse_decline
from kstrata.agents.prompt import (
    LEVELS,
    Feedback,
    PromptContext,
    TaskContract,
    api_sheet,
    build_prompt,
    retry_messages,
    toolchain,
)
from kstrata.agents.router import Declined, editable_levels
from kstrata.llm import CallLog, ProviderError

#: fence language of each level's text, per backend (or family)
LANGUAGES = {
    "tvm": {"graph": "python", "schedule": "python", "source": "c"},
    "tvm-llvm": {"graph": "python", "schedule": "python", "source": "llvm"},
    "tvm-cuda": {"graph": "python", "schedule": "python", "source": "cuda"},
    "tilelang": {"graph": "text", "schedule": "json", "source": "python"},
}
#: why timings mean nothing on a backend whose ``timing_meaningful`` is false
UNTIMED_NOTE = {
    "triton-interp": ("triton-interp runs Triton kernels in Triton's CPU interpreter (TRITON_INTERPRET=1), "
                      "so a time there measures the interpreter, not the kernel: kstrata judges correctness "
                      "and integrity only on this backend (speed is measured on `triton`, on a GPU)."),
}
#: what the graph role is told about the PrimFuncs its graph lowers to
GRAPH_LOWERING_NOTE = ("What this graph lowers to ({n} PrimFunc(s), each one kernel launch): a buffer parameter "
                       "of a PrimFunc that is not an input, parameter or output of the graph is an intermediate, "
                       "written to memory in its dtype by one PrimFunc and read back by the next.")


def language_for(backend: str, level: str) -> str:
    """Code-fence language of ``level`` on ``backend`` (``python`` by default)."""
    table = LANGUAGES.get(backend) or LANGUAGES.get(backend.split("-")[0], {})
    return table.get(level, "python")


def timed_shape(task: Any, candidate: Any, tree: Any = None) -> dict[str, int] | None:
    """The shape this run times at, from the stored timing of ``candidate``
    (or of any timed candidate of ``tree``), restricted to the task's size
    variables; ``None`` when nothing was timed yet."""
    nodes = [candidate, *(list(tree) if tree is not None else [])]
    for n in nodes:
        raw = getattr(getattr(getattr(n, "record", None), "measurement", None), "raw", None)
        if not isinstance(raw, Mapping):
            continue
        for m in raw.values():
            shape = (m.get("labels") or {}).get("shape") if isinstance(m, Mapping) else None
            if isinstance(shape, Mapping):
                return {k: int(shape[k]) for k in task.nominal_shape if isinstance(shape.get(k), int)}
    return None


def level_notes(task: Any, backend: Any, sources: Mapping[str, str], level: str) -> dict[str, str]:
    """What each level's text means for this candidate: the backend's
    ``level_context`` (TVM: the TensorIR a schedule names, lowered in a
    sandboxed process), and for TVM's graph level what the graph lowers to."""
    if backend is None:
        return {}
    want = "schedule" if level == "graph" and backend.name.startswith("tvm-") else level
    notes = dict(backend.level_context(task, dict(sources), want) or {})
    if want != level and want in notes:
        text = notes.pop(want)
        n = text.count("# PrimFunc ")  # kstrata's own heading per PrimFunc (isolated.primfunc_context)
        notes[level] = GRAPH_LOWERING_NOTE.format(n=n) + "\n" + text if n else text
    return notes


def prompt_context(task: Any, candidate: Any, feedback: Any, level: str, *, role: str, backend_name: str,
                   backend: Any = None, tree: Any = None, history: tuple[str, ...] = (),
                   decline: bool = False, sources: Mapping[str, str] | None = None,
                   notes: Mapping[str, str] | None = None) -> PromptContext:
    """The :class:`PromptContext` of an agent's prompt for ``candidate`` at ``level``.

    Parameters
    ----------
    task, candidate, feedback, level:
        As :meth:`kstrata.agents.base.Proposer.propose` gets them.
    role:
        ``single`` or the level agent's level.
    backend_name, backend:
        The backend's name and object (``None`` in tests: no level context).
    tree:
        The run's tree (for the timed shape when ``candidate`` was not timed).
    history:
        This run's history lines.
    decline:
        Whether the answer may decline.
    sources:
        The candidate's sources (default ``candidate.sources``).
    notes:
        Extra notes per level, put before the backend's.
    """
    sources = {k: v for k, v in dict(sources if sources is not None else candidate.sources).items()
               if isinstance(v, str)}
    timing = bool(getattr(backend, "timing_meaningful", True))
    levels = tuple(getattr(backend, "levels", LEVELS))
    has = frozenset(lv for lv, t in sources.items() if t.strip())
    all_notes = dict(notes or {})
    for lv, text in level_notes(task, backend, sources, level).items():
        all_notes[lv] = (all_notes.get(lv, "") + "\n\n" + text).strip()
    return PromptContext(
        task=TaskContract.from_task(task), backend=backend_name, level=level, sources=sources,
        role=role, feedback=Feedback.from_json(feedback),
        hardware=spec_for_backend(backend_name), language=language_for(backend_name, level),
        languages={lv: language_for(backend_name, lv) for lv in LEVELS}, level_notes=all_notes,
        history=history, timed_shape=timed_shape(task, candidate, tree) if timing else None,
        timing=timing, timing_note="" if timing else UNTIMED_NOTE.get(
            backend_name, f"{backend_name} does not time candidates: correctness and integrity only."),
        api=api_sheet(backend_name, level), toolchain=toolchain(backend_name), decline=decline,
        other_roles=tuple(lv for lv in editable_levels(backend_name, levels, has | {"graph", "schedule"})
                          if lv != level),
    )


class LLMProposer:
    """Proposes one candidate per call from an LLM provider.

    Parameters
    ----------
    provider:
        A :class:`kstrata.llm.base.Provider` (already checked).
    log:
        The :class:`kstrata.llm.CallLog` the provider reports to.
    role:
        ``"single"`` or a level name (then it only edits that level).
    max_format_retries:
        Extra calls allowed when an answer does not parse.
    level_notes:
        What each level's text means for this backend, shown in the prompt.
    backend:
        The :class:`~kstrata.backends.base.Backend`; its ``level_context`` (e.g.
        the lowered TensorIR a schedule names) is added to the prompt.
    """

    name = "llm"

    def __init__(self, provider: Any, log: CallLog, role: str = "single",
                 max_format_retries: int = 1, level_notes: dict[str, str] | None = None,
                 backend: Any = None):
        self.provider = provider
        self.backend = backend
        self.log = log
        self.role = role
        self.max_format_retries = max_format_retries
        self.level_notes = level_notes or {}
        self.name = f"llm:{getattr(provider, 'label', 'provider')}"

    @property
    def router(self) -> Any:
        """The loop's ``router=``: levels this candidate has something to edit
        at, round-robin; a failed candidate's feedback (re-targeted to the
        level that can fix it) and declines' requests decide first
        (:class:`~kstrata.agents.router.FeedbackRouter` with ``failures_only``)."""
        from kstrata.agents.router import FeedbackRouter

        return FeedbackRouter(backend=getattr(self.backend, "name", None), failures_only=True, rebuild=False)

    def propose(self, task: Any, candidate: Any, feedback: Any, level: str, *,
                context: ProposeContext) -> ProposalBatch:
        """One proposal at ``level`` (none if the provider fails or every answer
        is malformed; the calls are recorded either way).

        Raises
        ------
        kstrata.agents.router.Declined
            When the model declines (stored with the expansion; its calls kept).
        """
        ctx = prompt_context(task, candidate, feedback, level, role=self.role, backend_name=context.backend,
                             backend=self.backend, tree=context.tree, decline=True,
                             notes=self.level_notes)
        lang = ctx.language
        messages = build_prompt(ctx)
        proposals: list[Proposal] = []
        left = context.budget_left.get("proposer_calls")
        for attempt in range(self.max_format_retries + 1):
            if left is not None and attempt >= left:
                break  # a format retry may not overrun the call budget
            try:
                completion = self.provider.complete(messages)
            except ProviderError:
                break  # recorded by the provider's accounting hook
            declined = parse_decline(completion.text, level)
            if declined is not None:
                raise Declined(level, self.role, declined.diagnosis, declined.requests, list(self.log.take()))
            try:
                sources, parsed = answer_to_sources(
                    completion.text, candidate.sources, level,
                    finish_reason=completion.raw_finish_reason, language=lang,
                )
            except ParseError as e:
                messages = retry_messages(messages, completion.text, e.feedback, level, decline=True)
                continue
            proposals.append(Proposal(sources=sources, level=level, role=f"{self.role}-agent",
                                      rationale=parsed.rationale or "", metadata={"mode": parsed.mode}))
            break
        return ProposalBatch(proposals=proposals, calls=list(self.log.take()))
