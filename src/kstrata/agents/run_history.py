"""What a prompt is told about this run's earlier attempts, read from the tree.

- :func:`tree_history`: one line per edit on the path to a candidate, per
  recent correct candidate and decline elsewhere and per recent failure at
  the same level elsewhere, each with the agent's own stated reason and its
  outcome.
- :func:`earlier_answers`: what came of the candidate's own earlier
  expansions (children, declines), in full.
- :func:`last_failure`: the model's own last failed answer for this candidate
  and level, located: verdict, the check that decided it, the verifier's
  message, its located feedback items, the change itself as a diff from the
  candidate's text and, when the message names a line, the lines of the
  failed text around it. The text comes from the proposer that made it (the
  loop's tree is read without sources); without it the message alone is shown.
- :func:`judge_failure`: whether a failed verdict is the judge's own failure
  (its process ran out of memory, an evaluator exception), which says nothing
  about the candidate and is never presented as the candidate's fault.

Only this run's tree is read: a new run starts with no history.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: verifier messages longer than this are shown as head and tail
MAX_MESSAGE_CHARS = 1500
#: lines of the failed text shown on each side of the line a message names
CONTEXT_LINES = 3
#: diff lines of a failed change shown in the next prompt (head, then a count)
MAX_DIFF_LINES = 80
#: correct candidates made elsewhere in the run (siblings, cousins) listed in a history
OTHER_CORRECT = 3
_LINE = re.compile(r"\bline (\d+)\b")
#: a frame of the candidate's own file in the traceback its process sends (kstrata.sandbox.child names the
#: file ``<candidate>`` under "The candidate's own frames (innermost last):")
_CANDIDATE_FRAME = re.compile(r'File "<candidate>", line (\d+)')
#: a Python error about a name, without a line: its attribute or name
_NO_ATTRIBUTE = re.compile(r"has no attribute '(\w+)'")
_UNDEFINED = re.compile(r"\bname '(\w+)' is not defined")
_UNRESOLVED = re.compile(r'Unresolved call .*?\bname="tirx\.(\w+)"')
#: a timing failure that is the judge's timing worker dying of memory, not the candidate
#: (:meth:`kstrata.search.evaluators.VerifyMeasureEvaluator._screen` words it)
_JUDGE_OOM = re.compile(r"^timing against \S+ failed: RuntimeError: oom:")
#: the check of an evaluation that raised in the evaluator (:meth:`kstrata.search.loop` stores it)
EVALUATOR_EXCEPTION = "evaluator_exception"


def reason(text: str, limit: int = 300) -> str:
    """The agent's stated reason: the first paragraph of its rationale, on one line."""
    para = (text or "").strip().split("\n\n", 1)[0]
    return clip_words(" ".join(para.split()), limit)


def clip_words(line: str, limit: int) -> str:
    """``line`` whole when it fits in ``limit`` characters, else cut at the
    last word boundary before it, with `` ...`` (never mid-word)."""
    if len(line) <= limit:
        return line
    head = line[: limit - 4]
    cut = head.rsplit(" ", 1)[0] if " " in head else head
    return cut.rstrip(" ,;:") + " ..."


def role_label(role: Any) -> str:
    """A decline's role as code answers name theirs: ``graph`` -> ``graph-agent``
    (a decline stores its role's level; kstrata's own skips stay ``kstrata``)."""
    role = str(role or "")
    return f"{role}-agent" if role in ("graph", "schedule", "source", "single") else role


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped ("" if none)."""
    return next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")


def _message(node: Any) -> str:
    ev = node.record.evaluation
    evidence = ev.evidence if ev is not None and isinstance(ev.evidence, Mapping) else {}
    return str(evidence.get("message") or evidence.get("error") or "")


def failure_message(node: Any) -> str:
    """The verifier's message for ``node``'s failed verdict (head and tail when
    long); ``""`` when it passed, was not evaluated or has none."""
    if node is None or getattr(getattr(node, "record", None), "evaluation", None) is None:
        return ""
    if str(node.record.evaluation.verdict) == "correct":
        return ""
    return _clip(_message(node))


def judge_failure(node: Any) -> bool:
    """Whether ``node``'s failed verdict is the judge's own failure, not the
    candidate's: an exception in the evaluator (check ``evaluator_exception``,
    e.g. the judge's process running out of memory while it ran the reference
    or the float64 oracle) or the judge's timing worker killed for memory. Such a
    verdict says nothing about the candidate's code."""
    ev = getattr(getattr(node, "record", None), "evaluation", None)
    if ev is None or str(ev.verdict) == "correct":
        return False
    return ev.check == EVALUATOR_EXCEPTION or (ev.check == "timing" and bool(_JUDGE_OOM.match(_message(node))))


def outcome(node: Any, order: Sequence[str] = ()) -> str:
    """``node``'s verdict in a few words: ``correct, 1.2x`` (with ``timing
    untrusted`` when it was not believed, so it is not ranked), or the
    verdict, check, the test it failed at (:func:`failing_test`, its shape
    in ``order``, the task's size names) and the first line of the
    verifier's message (``not judged`` first when the judge itself failed)."""
    if not node.evaluated:
        return "not evaluated yet"
    if node.correct:
        if node.speedup is None:
            return "correct"
        trust = "" if getattr(node, "timing_trusted", True) else " (timing untrusted: not ranked)"
        return f"correct, {node.speedup:.3g}x{trust}"
    ev = node.record.evaluation
    msg = _message(node)
    check = f" ({ev.check})" if ev is not None and ev.check else ""
    head = "not judged, the judge itself failed (not the candidate's fault): " if judge_failure(node) else ""
    # where it failed: told to every role, not only the one asked to fix it (queue round rt56: a failed graph
    # child stood in its parent's schedule prompt as "384 of 385 elements outside tolerance" without B=5, D=77)
    test = "" if head else failing_test(ev.evidence if ev is not None else None, order)
    return f"{head}{node.verdict}{check}" + (f" at {test}" if test else "") \
        + (f": {clip_sentence(first_line(msg), 160)}" if msg else "")


def clip_sentence(line: str, limit: int) -> str:
    """``line`` whole when it fits in ``limit`` characters, else cut after its
    last full sentence within ``limit`` (one ending past a third of it), or
    at the last word boundary, marked `` (…)``: never mid-word (queue round:
    an "asked again" line read "...where the exact valu: The flat kernel")."""
    if len(line) <= limit:
        return line
    head = line[: limit - 4]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", head) if m.end() > limit // 3]
    if ends:
        return head[: ends[-1]] + " (…)"
    cut = head.rsplit(" ", 1)[0] if " " in head.strip() else head
    return cut.rstrip(" ,;:") + " (…)"


def tree_history(tree: Any, candidate: Any, level: str, limit: int = 10, order: Sequence[str] = ()) -> list[str]:
    """This run's history for a prompt about ``candidate`` at ``level``: the
    edits on the path to it (at most 4, oldest first), the latest correct
    candidates made elsewhere (siblings and cousins, at most
    :data:`OTHER_CORRECT`, each with its short hash), the declines elsewhere,
    then recent failures at ``level`` elsewhere in the run, at most ``limit``
    lines; empty without a tree. The children made from ``candidate`` and its
    declines are not repeated here: :func:`earlier_answers` gives them in full
    to the same prompt (queue round 3: each was said two or three times)."""
    if tree is None or candidate.hash not in getattr(tree, "nodes", {}):
        return []
    lines: list[str] = []
    path = tree.path_to_root(candidate.hash)
    for n in reversed(path[:-1][:4]):
        lines.append(f"on the path to this candidate: [{n.level}, {n.role}] "
                     f"{reason(n.rationale) or 'an edit'} -> {outcome(n, order)}")
    here = set(candidate.children) | {n.hash for n in path}
    shown = failed_answer(tree, candidate, level)  # the prompt's failure section gives it in full
    if shown is not None:
        here.add(shown[0].hash)
    elsewhere = [n for n in reversed(list(tree)) if n.hash not in here and n.evaluated]
    for n in [n for n in elsewhere if n.correct][:OTHER_CORRECT]:
        lines.append(f"elsewhere in this run ({n.hash[:8]}, from {(n.parents or ('?',))[0][:8]}): "
                     f"[{n.level}, {n.role}] {reason(n.rationale, 160) or 'an edit'} -> {outcome(n, order)}")
    lines += other_decline_lines(tree, candidate)
    for n in elsewhere:
        if len(lines) >= limit:
            break
        if n.level == level and not n.correct:
            lines.append(f"elsewhere in this run: [{n.level}, {n.role}] {reason(n.rationale, 160)} "
                         f"-> {outcome(n, order)}")
    return lines[:limit]


#: declines on other candidates of the run listed in a history (the latest)
OTHER_DECLINES = 3


def _asks(d: Mapping[str, Any]) -> str:
    asks = "; ".join(f"asked {r.get('level')}: {reason(str(r.get('text') or ''), 160)}"
                     for r in d.get("requests") or [] if isinstance(r, Mapping))
    return f" ({asks})" if asks else ""


def other_decline_lines(tree: Any, candidate: Any, limit: int = OTHER_DECLINES) -> list[str]:
    """History lines for the declines of this run stored on candidates other
    than ``candidate`` (those on its path, then the latest elsewhere, at most
    ``limit`` of those): each marked ``DECLINED`` with its diagnosis and what
    it asked of another level, so a later prompt sees that a branch was judged
    finished (declines on ``candidate`` itself: :func:`earlier_answers`)."""
    records = tree.declines() if hasattr(tree, "declines") else []
    path = {n.hash for n in tree.path_to_root(candidate.hash)[1:]}
    on_path, other = [], []
    for d in records:
        c = str(d.get("candidate") or "")
        if not c or c == candidate.hash or d.get("skipped"):  # a skip asked no model: no answer
            continue
        line = (f"[{d.get('level')}, {role_label(d.get('role'))}] DECLINED (no change made): "
                f"{reason(str(d.get('diagnosis') or ''), 240) or 'no diagnosis'}{_asks(d)}")
        if c in path:
            on_path.append(f"on the path to this candidate ({c[:8]}): {line}")
        else:
            other.append(f"elsewhere in this run ({c[:8]}): {line}")
    return on_path + other[::-1][:limit]


#: a request line inside a child's rationale: it asked for a change of that child, not of the
#: candidate the prompt is about (queue round 5: a failed graph child's "CROSS-LEVEL REQUEST: schedule:
#: in rms_norm_rows parallelize ..." stood verbatim in the schedule prompt of its parent, which has
#: no rms_norm_rows)
#: a duplicate answer as the search loop stores it in an expansion's error (ask's problems, known_candidate's text)
_DUPLICATE = re.compile(r"unusable answer \(duplicate\): [^;]*?its text is exactly candidate ([0-9a-f]{8})")
_CHILD_REQUEST = re.compile(r"CROSS-LEVEL REQUEST\s*:(?=\s*[<\[`*\"']*\s*(?:graph|schedule|source)\b)")

#: longest rationale or diagnosis shown whole in the "asked again" section
EARLIER_CHARS = 1200


def earlier_answers(tree: Any, candidate: Any, limit: int = EARLIER_CHARS,
                    order: Sequence[str] = ()) -> list[dict[str, str]]:
    """What came of the earlier expansions of ``candidate`` in this run, for a
    prompt that asks about it again: each child made from it (``{"kind":
    "child", "hash", "level", "role", "outcome", "text"}``, ``text`` its full
    rationale, cut at a word boundary past ``limit`` characters, a request
    line in it marked as made for that child) and each
    decline on it (``{"kind": "decline", ..., "text", "expansion"}``: the
    diagnosis and what it asked of another level, and the id of the
    expansion that stored it) and each answer not used because its text was
    a candidate the run already has (``{"kind": "duplicate", "hash"`` (that
    candidate's), ``..., "text", "expansion"}``), children first; ``[]`` when
    it was never expanded (or without a tree); ``order``: the task's size
    names, for the shape of a failed test (:func:`failing_test`). A duplicate that used an
    expansion's last retry was told to no one: the next prompt came out the
    same and a temperature-0 model sent the same text again (newcomer nc20)."""
    if tree is None or candidate is None or candidate.hash not in getattr(tree, "nodes", {}):
        return []
    out: list[dict[str, str]] = []
    for c in tree.children(candidate.hash):
        text = _CHILD_REQUEST.sub(f"CROSS-LEVEL REQUEST (made for child {c.hash[:8]}, not for this candidate):",
                                  " ".join((c.rationale or "").split()))
        out.append({"kind": "child", "hash": c.hash[:8], "level": str(c.level), "role": str(c.role),
                    "outcome": outcome(c, order), "text": clip_words(text, limit) or "(no rationale given)"})
    for d in tree.declines() if hasattr(tree, "declines") else []:
        if d.get("candidate") != candidate.hash or d.get("skipped"):  # a skip asked no model: no answer
            continue
        text = " ".join(str(d.get("diagnosis") or "").split())
        out.append({"kind": "decline", "hash": "", "level": str(d.get("level")), "role": role_label(d.get("role")),
                    "outcome": "declined", "text": (clip_words(text, limit) or "no diagnosis") + _asks(d),
                    "expansion": str(d.get("expansion") if d.get("expansion") is not None else "")})
    told: set[str] = set()
    for e in getattr(tree, "expansion_log", []):
        if e.candidate != candidate.hash:
            continue
        for m in _DUPLICATE.finditer(getattr(e, "error", None) or ""):
            if m.group(1) in told:
                continue
            told.add(m.group(1))
            same = next((n for h, n in tree.nodes.items() if h.startswith(m.group(1))), None)
            what = f"candidate {m.group(1)}" + (f" ({outcome(same, order)})" if same is not None else "")
            out.append({"kind": "duplicate", "hash": m.group(1), "level": str(e.level), "role": "",
                        "outcome": "not evaluated: a duplicate",
                        "text": f"an answer's text was exactly {what}, which this run already has, so it was not "
                                "evaluated again (kstrata does not evaluate the same text twice): send a different "
                                "change, not that text again",
                        "expansion": str(e.id if e.id is not None else "")})
    return out


def _clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` whole when short, else its first 3 and last lines within ``limit``
    (a TVM or compiler error says what failed at its end)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    lines = text.splitlines()
    head = lines[:3]
    tail: list[str] = []
    size = sum(len(x) + 1 for x in head)
    for line in reversed(lines[3:]):
        if size + len(line) + 1 > limit:
            break
        tail.insert(0, line)
        size += len(line) + 1
    omitted = len(lines) - len(head) - len(tail)
    if not tail:  # one huge line
        return text[: limit // 3] + " ... " + text[-(limit * 2 // 3):]
    return "\n".join(head + [f"... ({omitted} lines omitted) ..."] + tail)


def _named_line(lines: list[str], message: str) -> int | None:
    """The first line of ``lines`` (1-based) that uses the name a Python
    error in ``message`` is about, where the message gives no line:
    ``module 'tilelang.language' has no attribute 'erff'`` (``.erff``),
    ``name 'acc' is not defined`` (``acc``) or TileLang's ``Unresolved call
    ... name="tirx.fabs"`` (``T.abs(``/``T.fabs(``); ``None`` otherwise. Queue
    rounds rt69, rt72: a TileLang kernel's ``T.logf``/``T.erff``, or ``T.abs``
    in a ``T.vectorized`` loop, failed at its first call with that message
    alone, no line of the source."""
    m = _NO_ATTRIBUTE.search(message)
    u = _UNRESOLVED.search(message)
    n = _UNDEFINED.search(message)
    # TileLang's math call that does not lower (inside T.vectorized): T.exp for tirx.exp, T.abs for tirx.fabs
    names = "|".join(map(re.escape, {u.group(1), u.group(1).lstrip("f")})) if u else ""
    pattern = (re.compile(r"\.\s*" + re.escape(m.group(1)) + r"\b") if m else
               re.compile(r"(?<![\w.])" + re.escape(n.group(1)) + r"\b") if n else
               re.compile(r"\bT\s*\.\s*(?:" + names + r")\s*\(") if u else None)
    if pattern is None:
        return None
    code = [(i, line.split("#", 1)[0]) for i, line in enumerate(lines, 1)]
    return next((i for i, line in code if pattern.search(line)), None)


def located_lines(text: str, message: str, around: int = CONTEXT_LINES) -> tuple[int, str] | None:
    """``(line, excerpt)``: the first line number ``message`` names ("line
    N"), or else the first line using the attribute or name a Python
    ``AttributeError``/``NameError`` in it is about (:func:`_named_line`),
    and the numbered lines of ``text`` around it, that one marked ``>>``;
    ``None`` when it names none inside ``text``."""
    lines = text.splitlines()
    found = [int(m.group(1)) for m in _LINE.finditer(message)]
    named = _named_line(lines, message) if not any(1 <= n <= len(lines) for n in found) else None
    for n in found + ([named] if named else []):
        if 1 <= n <= len(lines):
            lo, hi = max(1, n - around), min(len(lines), n + around)
            width = len(str(hi))
            return n, "\n".join(f"{'>>' if i == n else '  '} {i:>{width}} | {lines[i - 1]}"
                                for i in range(lo, hi + 1))
    return None


def candidate_frame_line(evidence: Any) -> int | None:
    """The line of the innermost frame of the candidate's own file in the
    traceback of a failed verdict's ``evidence`` (``evidence["traceback"]``,
    whose "<candidate>" frames :mod:`kstrata.sandbox.child` lists innermost
    last); None when there is none. Queue round rt75: a Triton kernel whose
    ``x * rstd[:, None]`` broadcast a wrong-axis sum failed with "candidate
    raised InterpreterError: ValueError('Cannot make_shape_compatible: ...')",
    a message naming no line, while the traceback named the kernel's line 20:
    the prompt showed neither."""
    tb = evidence.get("traceback") if isinstance(evidence, Mapping) else None
    found = _CANDIDATE_FRAME.findall(tb) if isinstance(tb, str) else []
    return int(found[-1]) if found else None


def last_failure(tree: Any, candidate: Any, level: str,
                 text_of: Callable[[str], str | None] | None = None,
                 order: Sequence[str] = (), shown: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The latest child of ``candidate`` made at ``level`` that failed
    verification (or of the ancestor :func:`failed_answer` finds, whose
    ``level`` text is the same), for the prompt of the next attempt there;
    ``None`` when the latest evaluated child at ``level`` passed or there is none.

    Returns
    -------
    dict
        ``{"hash", "role", "verdict", "check", "message", "items", "rationale",
        "line", "excerpt", "diff", "judge", "ancestor", "test", "since"}`` (``test``:
        :func:`failing_test`, its shape in ``order``, the task's size names; ``since``:
        :func:`later_answers`): ``message`` the verifier's message (head and
        tail when long), ``items`` its located feedback (``{"kind", "level",
        "text"}``; each tagged ``level`` when the change was made from a
        correct candidate: the fault is the change's), ``line`` and
        ``excerpt`` the line the message names (else the innermost frame of the
        candidate's file in its traceback: :func:`candidate_frame_line`) and the
        failed text around it (``None`` and ``""`` when neither names a line or ``text_of``
        does not know the child's ``level`` text), ``diff`` the failed change
        as a unified diff from ``candidate``'s ``level`` text, or from
        ``shown[level]`` when given (the text the agent was shown and edited,
        e.g. tvm-llvm IR without its debug metadata) (``""`` when the
        failed text is not known), ``judge`` whether the verdict is the judge's
        own failure (:func:`judge_failure`), not the change's; ``ancestor``
        the short hash of the ancestor it was made from, ``""`` when made
        from ``candidate``.
    """
    found = failed_answer(tree, candidate, level)
    if found is None:
        return None
    child, at = found
    ev = child.record.evaluation
    message = _message(child)
    # the change was made at ``level`` alone from a candidate that passed: the fault is in it, whatever
    # level the verifier's generic tags guess (queue round 5: a failed graph change read "[shapes, likely
    # at level schedule]" and "[wrong_share, likely at level source]" in the graph agent's next prompt)
    own = bool(getattr(at, "correct", False))
    items = [{"kind": str(item.get("kind", "note")), "level": level if own and item.get("level") else item.get("level"),
              "text": _clip(str(item["text"]), 600)}
             for item in (ev.feedback if ev is not None and isinstance(ev.feedback, list) else [])
             if isinstance(item, Mapping) and item.get("text")]
    text = text_of(child.hash) if text_of is not None else None
    located = located_lines(text, message) if text and message else None
    frame = candidate_frame_line(ev.evidence if ev is not None else None) if text and located is None else None
    located = located_lines(text, f"line {frame}") if frame else located
    # the diff is from the text the agent was shown and edited (``shown``: tvm-llvm IR without debug metadata)
    before = (shown if shown is not None else (getattr(candidate, "sources", None) or {})).get(level)
    return {
        "hash": child.hash, "role": child.role, "verdict": str(child.verdict),
        "check": (ev.check if ev is not None else None) or "", "message": _clip(message),
        "items": items, "rationale": reason(child.rationale, 200),
        "line": located[0] if located else None, "excerpt": located[1] if located else "",
        "diff": change_diff(before, text) if text and isinstance(before, str) else "",
        "judge": judge_failure(child),
        "ancestor": at.hash[:8] if at is not candidate else "",
        "test": failing_test(ev.evidence if ev is not None else None, order),
        "since": later_answers(tree, child, level, order=order),
    }


def later_answers(tree: Any, child: Any, level: str, limit: int = 2, order: Sequence[str] = ()) -> list[str]:
    """The answers at ``level`` by ``child``'s role made after ``child``
    elsewhere in the run, latest first (at most ``limit``), each as
    ``"7f1c6960 (made on 82585bbc) -> correct, 1.8x"``. Queue round rt58 (a
    resumed run): the root's graph prompt said "Your last answer for this
    candidate failed ... a fix of that answer is what is wanted now", while
    the same agent had fixed that change on another branch since (correct):
    the prompt asked for the fix a second time."""
    nodes = list(tree)
    try:
        after = nodes[nodes.index(child) + 1:]
    except ValueError:
        return []
    later = [n for n in reversed(after) if n.level == level and n.role == child.role and n.evaluated]
    return [f"{n.hash[:8]} (made on {(n.parents or ('?',))[0][:8]}) -> {outcome(n, order)}"
            for n in later[:limit]]


def failing_test(evidence: Any, order: Sequence[str] = ()) -> str:
    """Which test a failed verdict came from, in the prompt's words: ``the
    public test at B=8, D=512 (input draw `offset`, seed 0)``, ``a hidden
    test (its shape, seed and draw are not shown)``, or ``""`` when the
    evidence names no stage (queue round 5: the failure section gave the
    message and its located items, but not the shape and draw the judge had
    recorded, which tell a one-pass variance from a tail bug).

    ``order`` is the task's size names in its own order (``task.nominal_shape``):
    the shape is written in it. The run store writes evidence with sorted keys,
    so a test read back from it comes in alphabetical order (queue round rt66:
    one prompt read "N=64, K=128" for the latest failure and "K=128, N=64" for
    an older one, on a task written N, K)."""
    if not isinstance(evidence, Mapping):
        return ""
    test = evidence.get("test")
    # the judge records a "test" for public tests only (TestCase.describe); a runtime error or a rejection
    # keeps it without a "stage" (queue round rt63: an out-of-bounds load on triton-interp named no shape)
    if evidence.get("stage", "public") == "public" and isinstance(test, Mapping) \
            and isinstance(test.get("shape"), Mapping):
        shape = ", ".join(f"{k}={v}" for k, v in in_task_order(test["shape"], order))
        draw = f"input draw `{test['distribution']}`" if test.get("distribution") else ""
        seed = f"seed {test['seed']}" if test.get("seed") is not None else ""
        more = ", ".join(x for x in (draw, seed) if x)
        return f"the public test at {shape}" + (f" ({more})" if more else "")
    if evidence.get("stage") == "hidden":
        return "a hidden test (its shape, seed and draw are not shown)"
    return ""


def in_task_order(shape: Mapping[str, Any], order: Sequence[str] = ()) -> list[tuple[str, Any]]:
    """``shape``'s items with the names in ``order`` first, in that order, then
    any others as they come (``order`` empty: as they come)."""
    first = [k for k in order if k in shape]
    return [(k, shape[k]) for k in first] + [(k, v) for k, v in shape.items() if k not in first]


#: the levels in the order kstrata lowers them: an edit at one leaves the texts of those before it as they were
LEVEL_ORDER = ("graph", "schedule", "source")


def _keeps(edit_level: Any, level: str) -> bool:
    """Whether an edit at ``edit_level`` leaves the ``level`` text as it was
    (a schedule or source edit keeps the graph; a graph edit rebuilds the schedule)."""
    return edit_level in LEVEL_ORDER and level in LEVEL_ORDER \
        and LEVEL_ORDER.index(str(edit_level)) > LEVEL_ORDER.index(level)


def failed_answer(tree: Any, candidate: Any, level: str) -> tuple[Any, Any] | None:
    """``(child, at)``: the latest child made at ``level`` from ``at`` that
    failed verification, where ``at`` is ``candidate`` or, when nothing was
    tried at ``level`` from it, the nearest ancestor whose ``level`` text is
    ``candidate``'s (every edit between them was at a later level: a
    schedule child keeps its parent's graph). ``None`` when the latest child
    at ``level`` there passed, or there is none (queue round 5: a failed
    graph answer on the parent reached the graph prompt of its schedule
    child as one history line, without its location or diff, though the
    same graph text was to be edited again)."""
    if tree is None or candidate is None or candidate.hash not in getattr(tree, "nodes", {}):
        return None
    path = tree.path_to_root(candidate.hash)
    for i, node in enumerate(path):
        if i and not _keeps(path[i - 1].level, level):
            return None
        tried = [c for c in tree.children(node.hash) if c.level == level and c.evaluated]
        if tried:
            child = max(tried, key=lambda c: (c.seq, c.created))
            return None if child.correct else (child, node)
    return None


def change_diff(before: str, after: str, limit: int = MAX_DIFF_LINES) -> str:
    """``after`` as a unified diff from ``before`` (2 lines of context; the
    first ``limit`` lines and a count of the rest); ``""`` when equal."""
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), "current text",
                                      "your failed change", n=2, lineterm=""))
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines)


def goal_facts(tree: Any, candidate: Any) -> dict[str, Any] | None:
    """What a prompt's goal is stated from: whether ``candidate`` is correct,
    its own reading (speedup against the primary baseline and whether the
    timing was trusted), its roofline fraction and bound (none when the
    timing is not trusted), and the run's best:
    the best ranked candidate when some timing was trusted, else the highest
    untrusted reading of a correct candidate (nothing is ranked then, and
    ``goal.j2`` names no such reading: it is noise, not a result).
    ``None`` when ``candidate`` was not evaluated.

    Returns
    -------
    dict
        ``{"correct", "speedup", "trusted", "roofline", "bound", "best",
        "best_speedup", "best_trusted", "best_is_this", "faster_baseline", "verified"}``
        (``verified``: :func:`verified_scope`, for a correct candidate);
        ``best`` is a short hash or ``""`` when no correct candidate has a
        reading; ``faster_baseline`` the fastest measured baseline that beats
        ``candidate`` (``{"name", "factor"}``: how many times faster), else ``None``.
    """
    if candidate is None or not getattr(candidate, "evaluated", False):
        return None
    nodes = list(tree) if tree is not None else [candidate]
    read = [n for n in nodes if n.correct and n.speedup is not None]
    trusted = [n for n in read if n.timing_trusted]
    best = max(trusted or read, key=lambda n: n.speedup, default=None)
    # a time not believed gives no roofline position (m25: "at most about 12x faster" of a contended reading)
    fraction = candidate.roofline_fraction if candidate.correct and candidate.timing_trusted else None
    m = getattr(candidate.record, "measurement", None) if candidate.correct else None
    fastest = min((s for s in (m.speedups if m is not None else ()) if s.value and s.value < 1),
                  key=lambda s: s.value, default=None)
    return {
        "correct": bool(candidate.correct), "speedup": candidate.speedup,
        "trusted": bool(candidate.timing_trusted), "bound": candidate.bound if fraction else None,
        "roofline": fraction if fraction is not None and 0 < fraction <= 1.05 else None,
        "best": best.hash[:8] if best is not None else "", "best_speedup": best.speedup if best else None,
        "best_trusted": bool(trusted), "best_is_this": best is not None and best.hash == candidate.hash,
        "faster_baseline": {"name": fastest.baseline, "factor": 1 / fastest.value} if fastest else None,
        "verified": verified_scope(candidate) if candidate.correct else None,
    }


def verified_scope(candidate: Any) -> dict[str, str]:
    """What the verification of a correct ``candidate`` covered, in the
    judge's words (its evidence): ``{"tests"}`` (how many public and hidden
    tests passed), ``"scope"`` when it ran at a reduced scope (which sweep
    shapes and draws it left out), ``"nominal"`` when the nominal shape was
    not verified. A prompt states these and claims no more (queue round:
    "already correct on every public and hidden test" after a small-scope
    check; the full check then failed)."""
    ev = getattr(candidate.record, "evaluation", None)
    evidence = getattr(ev, "evidence", None) or {}
    out = {"tests": str(evidence.get("message") or "")}
    if evidence.get("scope"):
        out["scope"] = _shapes(str(evidence["scope"]))
    if evidence.get("nominal_shape"):  # a sentence of its own in the prompt
        text = _shapes(str(evidence["nominal_shape"]))
        out["nominal"] = text[:1].upper() + text[1:]
    return out


#: a shape the judge's evidence writes as a Python dict, ``{'B': 4096, 'D': 4096}``
_SHAPE_DICT = re.compile(r"\{('\w+': \d+(?:, '\w+': \d+)*)\}")


def _shapes(text: str) -> str:
    """The judge's evidence text with its shapes written as the prompt writes
    them (``B=4096, D=4096``, not a Python dict)."""
    return _SHAPE_DICT.sub(lambda m: re.sub(r"'(\w+)': (\d+)", r"\1=\2", m.group(1)), text)
