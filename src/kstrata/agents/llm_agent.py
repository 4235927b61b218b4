"""A single-role LLM proposer: one agent that may edit any level.

It builds the prompt from public material only (:class:`PromptContext`), asks
the provider, parses the answer (whole block or SEARCH/REPLACE edits) and, if
the answer is malformed, retries with the parse error as feedback; every call,
retries included, is returned for the store and charged to the budget.
The per-level roles of the hierarchical agent build on this class.
"""

from __future__ import annotations

from typing import Any

from kstrata.agents.base import Proposal, ProposalBatch, ProposeContext
from kstrata.agents.knowledge import spec_for_backend
from kstrata.agents.parse import ParseError, answer_to_sources
from kstrata.agents.prompt import (
    Feedback,
    PromptContext,
    TaskContract,
    build_prompt,
    retry_messages,
)
from kstrata.llm import CallLog, ProviderError

#: fence language of each level's text, per backend family
LANGUAGES = {
    "tvm": {"graph": "python", "schedule": "python", "source": "c"},
    "tvm-llvm": {"graph": "python", "schedule": "python", "source": "llvm"},
}


def language_for(backend: str, level: str) -> str:
    """Code-fence language of ``level`` on ``backend`` (``python`` by default)."""
    table = LANGUAGES.get(backend) or LANGUAGES.get(backend.split("-")[0], {})
    return table.get(level, "python")


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

    def propose(self, task: Any, candidate: Any, feedback: Any, level: str, *,
                context: ProposeContext) -> ProposalBatch:
        """One proposal at ``level`` (none if the provider fails or every answer
        is malformed; the calls are recorded either way)."""
        lang = language_for(context.backend, level)
        notes = dict(self.level_notes)
        if self.backend is not None:
            for lvl, text in self.backend.level_context(task, dict(candidate.sources), level).items():
                notes[lvl] = (notes.get(lvl, "") + "\n\n" + text).strip()
        device = getattr(context, "device_name", "") or ""
        ctx = PromptContext(
            task=TaskContract.from_task(task), backend=context.backend, level=level,
            sources=dict(candidate.sources), role=self.role if self.role != "single" else "single",
            feedback=Feedback.from_json(feedback), hardware=spec_for_backend(context.backend, device),
            language=lang, level_notes=notes,
        )
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
            try:
                sources, parsed = answer_to_sources(
                    completion.text, candidate.sources, level,
                    finish_reason=completion.raw_finish_reason, language=lang,
                )
            except ParseError as e:
                messages = retry_messages(messages, completion.text, e.feedback, level)
                continue
            proposals.append(Proposal(sources=sources, level=level, role=f"{self.role}-agent",
                                      rationale=parsed.rationale or "", metadata={"mode": parsed.mode}))
            break
        return ProposalBatch(proposals=proposals, calls=list(self.log.take()))
