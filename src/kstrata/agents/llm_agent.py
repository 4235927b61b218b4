"""A single-role LLM proposer: one agent that may edit any level.

It builds the prompt from public material only (:class:`PromptContext`), asks
the provider, parses the answer (whole block or SEARCH/REPLACE edits) and, if
the answer is malformed, retries with the parse error as feedback; every call,
retries included, is returned for the store and charged to the budget.
The per-level roles of the hierarchical agent build on this class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from kstrata.agents.base import Proposal, ProposalBatch, ProposeContext
from kstrata.agents.closed import REPEAT, ClosedLevels, skipped
from kstrata.agents.knowledge import spec_for_backend
from kstrata.agents.llvm_debug import editable_sources, editable_text, restorer
from kstrata.agents.parse import (
    ParseError,
    answer_to_sources,
    as_decline,
    clip_marked,
    parse_cross_level_requests,
    parse_decline,
    placeable_requests,
)
from kstrata.agents.prompt import (
    LEVELS,
    Feedback,
    PromptContext,
    TaskContract,
    api_sheet,
    build_prompt,
    last_call_messages,
    public_reference,
    retry_messages,
    toolchain,
)
from kstrata.agents.router import Declined, derived_below, editable_levels, pending_requests, text_levels
from kstrata.agents.run_history import (
    earlier_answers,
    failure_message,
    goal_facts,
    judge_failure,
    last_failure,
    outcome,
    tree_history,
)
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.llm import CallLog

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


#: expansions per node and level a named policy allows when the proposer is an LLM
LLM_MAX_PER_LEVEL = 3


def editable_only(policy: Any, editable: Callable[..., list[str]]) -> Any:
    """``policy`` (a :class:`~kstrata.search.policies.Policy`) with its open
    levels cut to ``editable(node, tree)``: a node whose open levels cannot be
    edited is not expandable, so the loop never asks a role to edit nothing.
    ``tree`` is the one the policy last started on (``pre_search``) or judged
    expandability on (None before).

    When the policy finds nothing to expand that way, it chooses again with
    ``editable(node, tree, repeat=True)``: the levels closed only by the rules
    that guess an answer would repeat (:data:`~kstrata.agents.closed.REPEAT`:
    served, written here, chain, superseded) open again, up to the policy's
    ``max_per_level``, so a search with budget left asks a model again, with
    its earlier answers in the prompt, instead of stopping (six of seven
    queue runs stopped with 2-4 of 5-6 evaluations used). ``exhausted_why(tree)``
    says why nothing was left. Returns the same object."""
    base, base_expandable, base_pre, base_select = (policy.open_levels, policy.expandable, policy.pre_search,
                                                    policy.select)
    seen: dict[str, Any] = {"tree": None, "repeat": False}

    def pre_search(tree: Any, levels: tuple[str, ...]) -> None:
        seen["tree"] = tree
        base_pre(tree, levels)

    def expandable(tree: Any, node: Any) -> bool:
        seen["tree"] = tree
        return base_expandable(tree, node)

    def open_levels(node: Any) -> list[str]:
        can = editable(node, seen["tree"], repeat=True) if seen["repeat"] else editable(node, seen["tree"])
        return [lv for lv in base(node) if lv in can]

    def select(tree: Any, rng: Any) -> Any:
        seen["tree"], seen["repeat"] = tree, False
        exp = base_select(tree, rng)
        if exp is not None:
            return exp
        seen["repeat"] = True  # stays on until the next select: the loop's expand reads open_levels after it
        exp = base_select(tree, rng)
        if exp is None:
            return None
        return replace(exp, reason=REPEAT_NOTE + exp.reason)

    def exhausted_why(tree: Any) -> str:
        return closure_summary(tree, lambda node: [lv for lv in base(node)], editable)

    policy.pre_search = pre_search
    policy.expandable = expandable
    policy.open_levels = open_levels
    policy.select = select
    policy.exhausted_why = exhausted_why
    return policy


#: prefix of a policy reason when only a level closed by a repeat rule was left to ask
REPEAT_NOTE = ("asked again (every open level was closed by a rule that guesses the answer would repeat, "
               "and budget is left): ")


def closure_summary(tree: Any, policy_levels: Callable[[Any], list[str]], editable: Callable[..., list[str]],
                    most: int = 4) -> str:
    """Why no candidate of ``tree`` is left to expand, in words: nothing
    correct, or per correct candidate (best first, at most ``most``) the
    levels it was asked ``max_per_level`` times at, or closed (and why)."""
    nodes = tree.ranked() if hasattr(tree, "ranked") else []
    if not nodes:
        return "no candidate is correct and the start was asked its limit (or cannot be edited)"
    parts = []
    for node in nodes[:most]:
        limit = [lv for lv in editable(node, tree, repeat=True, closed_ok=True) if lv not in policy_levels(node)]
        closed = [lv for lv in editable(node, tree, repeat=True, closed_ok=True)
                  if lv in policy_levels(node) and lv not in editable(node, tree, repeat=True)]
        bits = [f"{lv} asked the policy's limit" for lv in limit] + [f"{lv} closed" for lv in closed]
        parts.append(f"{node.hash[:8]}: {', '.join(bits) or 'nothing an agent can edit'}")
    more = f"; {len(nodes) - most} more" if len(nodes) > most else ""
    return ("every correct candidate's levels were asked the policy's limit or are closed (a decline, or "
            "nothing to edit): " + "; ".join(parts) + more)


def editable_on(node: Any, backend: str, levels: tuple[str, ...], known_text: Mapping[str, frozenset[str]],
                closed: ClosedLevels | Iterable[tuple[str, str]], tree: Any = None, repeat: bool = False,
                closed_ok: bool = False) -> list[str]:
    """The levels an agent can edit on ``node``: :func:`~kstrata.agents.router.editable_levels`
    with its text levels as the proposer saw them (``known_text``), else as
    stored (unknown: no level that needs text), less the levels ``closed``
    on it (:class:`~kstrata.agents.closed.ClosedLevels`, or ``(hash, level)``
    pairs where the role declined): declined or skipped there or on a
    candidate with the same text, served by a correct child of a model's
    answer (with ``tree``: asked again, a model gave variants of its own
    answer or declined, 12 of 21 calls in the triton-interp queue run, 9 of
    16 on tvm-llvm), or nothing to edit in the lowered graph. A level is asked
    again only after answers that failed, with the failure in the prompt.
    With ``repeat``, a level closed only by a repeat rule
    (:data:`~kstrata.agents.closed.REPEAT`) stays; with ``closed_ok``, every
    closed level stays (the levels that have text)."""
    has = known_text.get(node.hash)
    if has is None:
        has = text_levels(None, node)
    if not isinstance(closed, ClosedLevels):
        closed = ClosedLevels(closed)
    can = editable_levels(backend, levels, has)
    if closed_ok:
        return list(can)
    if repeat:
        return [lv for lv in can if (closed.closure(node, lv, tree) or ("", ""))[0] in ("", *REPEAT)]
    return closed.open_levels(node, can, tree)


def language_for(backend: str, level: str) -> str:
    """Code-fence language of ``level`` on ``backend`` (``python`` by default)."""
    table = LANGUAGES.get(backend) or LANGUAGES.get(backend.split("-")[0], {})
    return table.get(level, "python")


def timed_shape(task: Any, candidate: Any, tree: Any = None) -> dict[str, int] | None:
    """The shape this run times at, from the stored timing of ``candidate``
    (or of any timed candidate of ``tree``), restricted to the task's size
    variables; ``None`` when nothing was timed yet.

    A stored measurement's ``raw`` is the evaluator's measurement mapping
    (:func:`kstrata.search.evaluators._measurement_dict`): ``{"median_ms", ...,
    "raw": {baseline: {"labels": {"shape": {...}}, ...}}}``; the per-baseline
    mapping itself is read too."""
    nodes = [candidate, *(list(tree) if tree is not None else [])]
    for n in nodes:
        raw = getattr(getattr(getattr(n, "record", None), "measurement", None), "raw", None)
        shape = _labelled_shape(raw)
        if shape is not None:
            return {k: int(shape[k]) for k in task.nominal_shape if isinstance(shape.get(k), int)}
    return None


def _labelled_shape(raw: Any) -> Mapping[str, Any] | None:
    """The ``labels.shape`` of the first timing in ``raw`` (see :func:`timed_shape`)."""
    if not isinstance(raw, Mapping):
        return None
    per_baseline = raw.get("raw") if isinstance(raw.get("raw"), Mapping) else raw
    for m in per_baseline.values():
        shape = (m.get("labels") or {}).get("shape") if isinstance(m, Mapping) else None
        if isinstance(shape, Mapping):
            return shape
    return None


def timed_work(task: Any, shape: Mapping[str, int] | None) -> dict[str, float]:
    """``{"flops", "bytes"}`` of one call at ``shape`` from the task's work
    formulas (those it has; the reference is not run to measure them)."""
    if not shape:
        return {}
    full = task.full_shape(dict(shape))
    out = {}
    for key in ("flops", "bytes"):
        if getattr(task.meta, key, None):
            try:
                out[key] = float(getattr(task, key)(full))
            except Exception:  # noqa: BLE001 - a formula that does not evaluate is left out
                continue
    return out


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


def placed_requests(tree: Any, node: Any, level: str) -> tuple[dict[str, Any], ...]:
    """The pending requests for ``level`` on ``node``
    (:func:`~kstrata.agents.router.pending_requests`): made on ``node`` or
    one of its ancestors, so ``node``'s text has what their makers saw."""
    return tuple(r for r in pending_requests(tree, node) if r["level"] == level)


def prompt_context(task: Any, candidate: Any, feedback: Any, level: str, *, role: str, backend_name: str,
                   backend: Any = None, tree: Any = None, history: tuple[str, ...] = (),
                   decline: bool = False, sources: Mapping[str, str] | None = None,
                   notes: Mapping[str, str] | None = None,
                   text_of: Callable[[str], str | None] | None = None,
                   run_shape: Mapping[str, int] | None = None,
                   closed: ClosedLevels | None = None) -> PromptContext:
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
    text_of:
        ``child hash -> its text at level``, for the lines around a failed
        answer's error (:func:`~kstrata.agents.run_history.last_failure`).
    run_shape:
        The shape the run times at (:attr:`~kstrata.agents.base.ProposeContext.timing_shape`),
        named before anything was timed.
    closed:
        The levels closed on candidates (:class:`~kstrata.agents.closed.ClosedLevels`):
        a level closed on ``candidate`` is not offered for cross-level requests,
        unless a request reopens it (:meth:`~kstrata.agents.closed.ClosedLevels.offered`).
    """
    sources = {k: v for k, v in dict(sources if sources is not None else candidate.sources).items()
               if isinstance(v, str)}
    timing = bool(getattr(backend, "timing_meaningful", True))
    levels = tuple(getattr(backend, "levels", LEVELS))
    has = frozenset(lv for lv, t in sources.items() if t.strip())
    shape = timed_shape(task, candidate, tree) if timing else None
    if timing and shape is None and run_shape:  # nothing timed yet: the shape this run will time at
        shape = {k: int(v) for k, v in run_shape.items() if k in task.nominal_shape}
    all_notes = dict(notes or {})
    for lv, text in level_notes(task, backend, sources, level).items():
        all_notes[lv] = (all_notes.get(lv, "") + "\n\n" + text).strip()
    return PromptContext(
        task=TaskContract.from_task(task), backend=backend_name, level=level, sources=sources,
        role=role, feedback=replace(Feedback.from_json(feedback), message=failure_message(candidate),
                                    not_judged=judge_failure(candidate) if candidate is not None else False),
        hardware=spec_for_backend(backend_name), language=language_for(backend_name, level),
        languages={lv: language_for(backend_name, lv) for lv in LEVELS}, level_notes=all_notes,
        history=history, timed_shape=shape, timed_work=timed_work(task, shape),
        timing=timing, timing_note="" if timing else UNTIMED_NOTE.get(
            backend_name, f"{backend_name} does not time candidates: correctness and integrity only."),
        api=api_sheet(backend_name, level, public_reference(getattr(task, "source", "") or "") + "\n"
                      + "\n".join(sources.values())), toolchain=toolchain(backend_name), decline=decline,
        # the failed text as the agent was shown its parent's (tvm-llvm IR: folded), for the diff and the lines
        last_failure=last_failure(tree, candidate, level,
                                  (lambda h: editable_text(backend_name, level, text_of(h))) if text_of else None,
                                  order=tuple(task.nominal_shape), shown=sources)
        if candidate is not None else None,
        goal=goal_facts(tree, candidate),
        requests=placed_requests(tree, tree[candidate.hash], level)
        if tree is not None and candidate is not None and candidate.hash in getattr(tree, "nodes", {}) else (),
        earlier=tuple(earlier_answers(tree, tree[candidate.hash], order=tuple(task.nominal_shape)))
        if tree is not None and candidate is not None and candidate.hash in getattr(tree, "nodes", {}) else (),
        other_roles=tuple(lv for lv in editable_levels(backend_name, levels, has | {"graph", "schedule"})
                          if lv != level and (closed is None or candidate is None
                                              or closed.offered(candidate, lv, tree))),
    )


def known_candidate(tree: Any, task: Any, backend_name: str) -> Callable[[Mapping[str, str]], str | None]:
    """For :func:`ask`: given an answer's new sources, what to tell the model
    when they are a candidate ``tree`` already has (its hash, where it was
    made and its outcome), else ``None``. The loop drops such a proposal as a
    duplicate, and the model was then asked the same prompt again with no
    word of why (queue round 3, tilelang-c: a sibling's text sent again)."""
    def known(sources: Mapping[str, str]) -> str | None:
        nodes = getattr(tree, "nodes", None)
        if not nodes:
            return None
        h = content_hash(normalize_sources(sources), backend_name, task.digest)
        if h not in nodes:
            return None
        node = tree[h]
        origin = f"made from {node.parents[0][:8]}" if node.parents else "the run's start"
        return (f"Your previous answer could not be used: its text is exactly candidate {h[:8]} ({origin}; "
                f"{outcome(node, tuple(task.nominal_shape))}), which this run already has, and kstrata does "
                "not evaluate the same text twice. Send a different change, or decline (no code, a DIAGNOSIS).")
    return known


def ask(provider: Any, log: Any, messages: list[dict[str, str]], sources: Mapping[str, str], level: str, *,
        role: str, language: str, retries: int, calls_left: float | None,
        other_roles: tuple[str, ...] = (),
        known: Callable[[Mapping[str, str]], str | None] | None = None,
        restore: Callable[[dict[str, str]], dict[str, str]] | None = None) -> tuple[Any, list[str]]:
    """Ask for a change of ``level``, retrying malformed answers with the
    parse error (each retry is a call against the budget; ``other_roles``:
    the levels the first prompt offered for cross-level requests, so the
    retry asks for a request line only where one can be made). An answer
    whose sources ``known`` has a message for (:func:`known_candidate`: a
    candidate the run already has) is retried with that message, as a
    ``duplicate`` parse error. When ``calls_left`` allows this call only
    (and ``retries`` would have allowed a retry), the prompt says that an
    unusable answer gets no retry (:func:`~kstrata.agents.prompt.last_call_messages`).
    ``restore`` completes the new sources made from the shown ``sources``
    (:func:`~kstrata.agents.llvm_debug.restorer`: lines folded out of the
    shown text put back) before ``known`` reads them.

    Returns
    -------
    (answer, problems)
        ``answer`` is ``(sources, parsed, text)`` with the candidate's new
        sources, the :class:`~kstrata.agents.parse.ParsedAnswer` and the
        answer's text, or ``None`` when no usable answer came;
        ``problems`` says why each unusable answer was not used.

    Raises
    ------
    kstrata.agents.router.Declined
        When an answer declines: a ``DECLINE`` line or a decline in words
        without code (:func:`~kstrata.agents.parse.parse_decline`), code that
        leaves the level unchanged, or, once the retries are spent, prose
        without code. Its diagnosis and requests are kept, never lost to a
        parse error; it carries the calls made.
    """
    problems: list[str] = []
    last: tuple[str, ParseError] | None = None
    if retries > 0 and calls_left is not None and calls_left < 2:
        # the budget allows this call only: say so, since an unusable answer gets no retry prompt
        messages = last_call_messages(messages, level, decline=True)
    for attempt in range(retries + 1):
        if calls_left is not None and attempt >= calls_left:
            break  # a format retry may not overrun the call budget
        try:
            completion = provider.complete(messages)
        except Exception as e:  # noqa: BLE001 - a provider failure is an attempt without an answer
            problems.append(f"no answer: {type(e).__name__}: {e}")
            break
        text = completion.text or ""
        declined = parse_decline(text, level)
        if declined is None:
            try:
                new, parsed = answer_to_sources(text, sources, level, finish_reason=completion.raw_finish_reason,
                                                language=language)
                new = restore(new) if restore is not None else new
                seen = known(new) if known is not None else None
                if seen is not None:
                    dup = ParseError("duplicate", seen)
                    dup.feedback = seen
                    raise dup
            except ParseError as e:
                if e.kind == "unchanged":  # code that changes nothing: a decline in code form
                    declined = as_decline(text, level)
                else:
                    problems.append(f"unusable answer ({e.kind}): {e}")
                    last = (text, e)
                    messages = retry_messages(messages, text, e.feedback, level, decline=True,
                                              other_roles=other_roles)
                    continue
            else:
                return (new, parsed, text), problems
        requests, lost = placeable_requests(declined.requests, other_roles)
        out = Declined(level, role, (declined.diagnosis or "no change") + lost, requests, list(log.take()))
        out.problems = list(problems)
        raise out
    if last is not None and last[1].kind == "no_code" and last[0].strip():
        d = as_decline(last[0], level)  # prose without code, twice: what it says is kept as a decline
        raise Declined(level, role, d.diagnosis, d.requests, list(log.take()))
    return None, problems


def replay_in_sandbox(task: Any, parent: dict[str, str], sources: dict[str, str],
                    backend_name: str) -> tuple[dict[str, str], dict]:
    """``sources`` (a graph change of a TVM candidate whose levels were
    ``parent``) with the parent's schedule replayed on the new graph: steps
    that no longer apply (a PrimFunc the change renamed or removed, a block it
    fused away) are dropped, and the report says which (``applied``,
    ``failed``, ``funcs``, ``unscheduled``, ``structure``).

    Both texts are candidate text: the lowering and the replay run in a
    sandboxed process (:func:`kstrata.backends.tvm.isolated.replay_after_graph_change`),
    never here; a failure there keeps the parent's schedule and the report says why.
    """
    from kstrata.backends.tvm.isolated import replay_after_graph_change

    schedule, report = replay_after_graph_change(task, sources, parent.get("schedule", ""), backend_name)
    return {**sources, "schedule": schedule}, report


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
        #: candidate hash -> the text this proposer wrote at its level (for located failures)
        self._proposed: dict[str, str] = {}
        #: candidate hash -> levels it has text for; the levels closed on candidates (declined, served)
        self._text: dict[str, frozenset[str]] = {}
        # rule 6 without lineage: on a backend that times nothing, its own rewrite is not news to the agent
        self.closed = ClosedLevels(untimed=backend is not None and not getattr(backend, "timing_meaningful", True))

    def policy(self, policy: Any) -> Any:
        """The loop's policy: ``policy`` (a name or object) whose open levels
        are only those the model can edit on the node (never TVM's ``source``
        without text, nor a level where it declined on that node); a policy
        given by name allows :data:`LLM_MAX_PER_LEVEL` expansions per node and
        level, so after a failed answer the model is asked there again, with
        its failure in the prompt."""
        from kstrata.search.policies import make_policy

        pol = make_policy(policy)
        if isinstance(policy, str):
            pol.max_per_level = max(pol.max_per_level, LLM_MAX_PER_LEVEL)
        levels = tuple(getattr(self.backend, "levels", LEVELS))
        name = getattr(self.backend, "name", "")
        return editable_only(pol, lambda node, tree, **kw: editable_on(node, name, levels, self._text, self.closed,
                                                                       tree, **kw))

    def settings(self, settings: Any) -> Any:
        """The loop's settings, unchanged (the same hook as the hierarchical proposer's)."""
        return settings

    @property
    def router(self) -> Any:
        """The loop's ``router=``: levels this candidate has something to edit
        at, round-robin; a failed candidate's feedback (re-targeted to the
        level that can fix it) and declines' requests decide first
        (:class:`~kstrata.agents.router.FeedbackRouter` with ``failures_only``)."""
        from kstrata.agents.router import FeedbackRouter

        # known_text: the loop's tree is read without sources, so only the proposer knows that a start
        # given with TVM's `source` has text there (queue round rt69: a request to source went unrouted)
        return FeedbackRouter(backend=getattr(self.backend, "name", None), failures_only=True, rebuild=False,
                              levels=getattr(self.backend, "levels", None), known_text=self._text.get,
                              closed=lambda tree, node, lv: self.closed.why(node, lv, tree))

    def propose(self, task: Any, candidate: Any, feedback: Any, level: str, *,
                context: ProposeContext) -> ProposalBatch:
        """One proposal at ``level`` (none if the provider fails or every answer
        is malformed; the calls are recorded either way).

        Raises
        ------
        kstrata.agents.router.Declined
            When the model declines (stored with the expansion; its calls kept).
        """
        has = frozenset(lv for lv, t in dict(candidate.sources).items() if isinstance(t, str) and t.strip())
        self._text[candidate.hash] = has
        self.closed.observe(candidate.hash, dict(candidate.sources))
        self.closed.observe_empty(candidate.hash, self.backend, dict(candidate.sources),
                                  context.levels or LEVELS)
        if level not in editable_levels(context.backend, context.levels or LEVELS, has):
            return skipped(level, f"nothing to edit at the {level} level: this candidate has no {level} text")
        why = self.closed.nothing_to_edit(candidate, level)
        if why is not None:
            return skipped(level, why)
        shown = editable_sources(context.backend, dict(candidate.sources), level)  # tvm-llvm IR: no debug metadata
        ctx = prompt_context(task, candidate, feedback, level, role=self.role, backend_name=context.backend,
                             backend=self.backend, tree=context.tree, decline=True, notes=self.level_notes,
                             sources=shown,
                             history=tuple(tree_history(context.tree, candidate, level,
                                                        order=tuple(task.nominal_shape))),
                             text_of=self._proposed.get, run_shape=context.timing_shape, closed=self.closed)
        try:
            answer, problems = ask(self.provider, self.log, build_prompt(ctx), shown, level,
                                    role=self.role, language=ctx.language, retries=self.max_format_retries,
                                    calls_left=context.budget_left.get("proposer_calls"), other_roles=ctx.other_roles,
                                    known=known_candidate(context.tree, task, context.backend),
                                    restore=restorer(context.backend, dict(candidate.sources), level))
        except Declined as d:
            self.closed.close(candidate.hash, level, f"the model declined on {candidate.hash[:8]}: "
                                                     + clip_marked(d.record["diagnosis"], 200))
            raise
        proposals: list[Proposal] = []
        if answer is not None:
            sources, parsed, text = answer
            # text generated from the edited level (TVM's source) is stale now; kept, it was what ran
            # (the backend builds the lowest level present), so a graph or schedule change did nothing
            # (queue round 5: a graph without the weight multiply read correct on rmsnorm)
            stale = [lv for lv in derived_below(context.backend, level, context.levels or LEVELS) if lv in sources]
            sources = {k: v for k, v in sources.items() if k not in stale}
            meta = {"mode": parsed.mode, **({"dropped_levels": stale} if stale else {})}
            # a request line beside code is kept as the hierarchical proposer keeps it, so the router asks the
            # named level next and its prompt shows the request (queue round rt56: a graph change's "CROSS-LEVEL
            # REQUEST: schedule: ..." was dropped, and the graph level was asked again on an unscheduled PrimFunc)
            requests = [r for r in parse_cross_level_requests(text) if r["level"] != level]
            if requests:
                meta["cross_level_request"] = requests
            if level == "graph" and context.backend.startswith("tvm-") and hasattr(self.backend, "lower") \
                    and str(sources.get("schedule") or "").strip():
                # the schedule names the PrimFuncs of the old graph: replayed on the new one, as the
                # hierarchical proposer does (queue round 2026-12-05: a graph change that renamed the
                # scheduled PrimFunc kept the schedule as written and read compile_error "no PrimFunc named")
                sources, meta["replay"] = replay_in_sandbox(task, dict(candidate.sources), sources, context.backend)
            child = content_hash(normalize_sources(sources), context.backend, task.digest)
            self._proposed[child] = sources.get(level, "")
            self._text[child] = frozenset(lv for lv, t in sources.items() if isinstance(t, str) and t.strip())
            self.closed.observe(child, sources)
            proposals.append(Proposal(sources=sources, level=level, role=f"{self.role}-agent",
                                      rationale=parsed.rationale or "", metadata=meta))
        return ProposalBatch(proposals=proposals, calls=list(self.log.take()),
                             problems=[] if proposals else list(problems))
