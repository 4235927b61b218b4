"""Turn a model's answer into the new source of one level.

Two answer forms are accepted (the prompt asks for one of them):

- a whole code block: exactly one fenced block (```` ```python ... ``` ````,
  any language tag, or ``~~~``) holding the complete new source;
- SEARCH/REPLACE edits, as aider writes them (Gauthier, aider "editblock"
  format), applied in order to the current source::

      <<<<<<< SEARCH
      lines copied exactly from the current source
      =======
      the lines that replace them
      >>>>>>> REPLACE

A SEARCH text must occur exactly once; when it does not occur verbatim,
trailing whitespace and then a uniform indentation shift are forgiven (as aider
does), never anything else.

A malformed answer raises :class:`ParseError`, whose :attr:`ParseError.feedback`
is written to be sent back to the model for a retry (the retry counts against
the budget like any call). Kinds: ``truncated`` (unclosed fence or edit block,
or the API says the token limit was hit), ``too_long`` (over :data:`MAX_ANSWER_CHARS`,
refused before it is read further), ``no_code``, ``diff_block`` (a unified diff, not applied), ``conflicting_blocks``,
``no_opening_fence`` (code sent as prose, closed by a bare ``` with no opening fence),
``malformed_edit``, ``edit_no_match``, ``edit_ambiguous``, ``unchanged``; and
``duplicate``, raised by the agents (:func:`kstrata.agents.llm_agent.known_candidate`:
the answer's text is a candidate the run already has).

A third form declines: an answer with a ``DECLINE`` line and no code, a
``DIAGNOSIS:`` and ``CROSS-LEVEL REQUEST: <level>: <text>`` lines
(:func:`parse_decline`). It is read with regular expressions over the
answer's text, like everything here: nothing in an answer is evaluated.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

#: the longest answer read (characters): twice the longest source the judge parses
#: (:data:`kstrata.pysyntax.MAX_SOURCE_CHARS`), room for a whole source and its prose; a longer one is
#: refused before any pattern runs over it (red team rt51: answers had no size limit in kstrata's process)
MAX_ANSWER_CHARS = 4_000_000
#: finish reasons that mean "stopped at the token limit" (OpenAI, Anthropic).
TRUNCATED_REASONS = ("length", "max_tokens", "max_output_tokens")
#: fence languages that are never the candidate's code.
NON_CODE_LANGUAGES = ("text", "txt", "bash", "sh", "shell", "console", "output", "log", "diff", "markdown", "md")

#: The prose patterns below read one line each (``[^\w\n]``, ``[ \t]``: never ``\W``/``\s``, which
#: cross newlines) with possessive quantifiers (``*+``) where two runs could trade characters: with
#: ``^\W*`` a 40 KB answer of "DECLINE" and blank lines took 48 s to read (quadratic), in
#: kstrata's own process (red team rt51); now every one is linear in the answer's length.
_DECLINE = re.compile(r"^[^\w\n]*+DECLINE(?:D)?\b[ \t]*+:?[ \t]*+(.*)$", re.IGNORECASE | re.MULTILINE)
_DIAGNOSIS = re.compile(r"^[^\w\n]*+DIAGNOSIS[ \t]*+:[ \t]*+(.*)$", re.IGNORECASE)
#: a request line; the level may be wrapped as the answer format shows it (``<schedule>``) or
#: marked up (``[graph]``, ```graph```, ``**graph**``)
_REQUEST = re.compile(r"^[^\w\n]*+CROSS-LEVEL REQUEST[ \t]*+:[ \t]*+[<\[`*\"']*+[ \t]*+(graph|schedule|source)[ \t]*+"
                      r"[>\]`*\"']*+[ \t]*+[:\-][ \t]*+(.+)$", re.IGNORECASE | re.MULTILINE)
#: any request line, with or without a level ("CROSS-LEVEL REQUEST: none")
_REQUEST_LINE = re.compile(r"^[^\w\n]*+CROSS-LEVEL REQUEST\b", re.IGNORECASE)
#: a request's text that asks for nothing ("none needed", "no graph change needed", "n/a")
_NULL_REQUEST = re.compile(
    r"^\W*(?:none|nothing|n/?a|no|not\s+needed|not\s+applicable|no\s+(?:\w+[- ])?(?:request|change|edit|action)s?)"
    r"(?:\s+(?:is\s+|are\s+)?(?:needed|required|necessary|requested|to\s+(?:do|change|request)))?\s*(?:[.;,:!)\-\u2013\u2014]|$)",
    re.IGNORECASE)
#: phrases that say "I make no change" in an answer without code (it then declines)
_DECLINE_PHRASE = re.compile(
    r"\b(?:i\s+declines?|declin(?:e|es|ed|ing)\b(?:\s+to)?|no\s+(?:further\s+)?changes?\b|nothing\s+to\s+change"
    r"|(?:make|making|propose|proposing)\s+no\s+(?:\w+[- ])?(?:change|edit)"
    r"|no\s+(?:graph|schedule|source)[- ]level\s+(?:change|edit)"
    r"|(?:cannot|can't|can\s+not)\s+(?:be\s+)?(?:improve|help|fix|do\s+better)"
    r"|(?:leave|leaving|keep|keeping)\s+(?:it|this|the\s+\w+(?:\s+level)?)\s+(?:as\s+it\s+is|unchanged|as\s+is))",
    re.IGNORECASE,
)
#: a level named in prose ("the schedule level", "graph-level agent", "the source role")
_LEVEL_MENTION = re.compile(r"\b(graph|schedule|source)[- ](?:level|agent|role)s?\b", re.IGNORECASE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*+([\w.+#-]*+)[^`]*+$")
_SEARCH = re.compile(r"^ {0,3}<{5,9} ?SEARCH\s*$")
_DIVIDER = re.compile(r"^ {0,3}={5,9}\s*$")
_REPLACE = re.compile(r"^ {0,3}>{5,9} ?REPLACE\s*$")

FORMAT_REMINDER = (
    "Answer with a short rationale, then EITHER exactly one fenced code block with the "
    "complete new source, OR one or more SEARCH/REPLACE blocks:\n"
    "<<<<<<< SEARCH\n(lines copied exactly from the current source)\n=======\n"
    "(their replacement)\n>>>>>>> REPLACE"
)


class ParseError(ValueError):
    """A model answer that yields no usable source.

    Attributes
    ----------
    kind:
        See the module docstring.
    feedback:
        What to tell the model for a retry (includes the required format).
    details:
        JSON-able specifics (block counts, the failing edit's index, ...).
    """

    def __init__(self, kind: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.kind = kind
        self.details = details
        self.feedback = f"Your previous answer could not be used: {message}\n\n{FORMAT_REMINDER}"


@dataclass(frozen=True)
class CodeBlock:
    """A fenced block: its language tag (lower case, may be empty), body and
    the 0-based line of its opening fence."""

    language: str
    body: str
    line: int


@dataclass(frozen=True)
class Edit:
    """One SEARCH/REPLACE edit."""

    search: str
    replace: str


@dataclass(frozen=True)
class ParsedAnswer:
    """A usable answer.

    Attributes
    ----------
    source:
        The complete new source of the edited level.
    mode:
        ``"full"`` (a whole code block) or ``"edits"``.
    rationale:
        The answer's prose outside code and edit blocks (at most 2000 characters).
    edits:
        The edits applied, in order (empty in ``full`` mode).
    """

    source: str
    mode: Literal["full", "edits"]
    rationale: str = ""
    edits: tuple[Edit, ...] = field(default_factory=tuple)


def code_blocks(text: str) -> tuple[list[CodeBlock], bool, list[str]]:
    """Fenced blocks of ``text``.

    Returns
    -------
    (blocks, unclosed, prose)
        The closed blocks in order, whether a fence is left open at the end,
        and the lines outside every block.
    """
    blocks: list[CodeBlock] = []
    prose: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            prose.append(lines[i])
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        end = next(
            (j for j in range(i + 1, len(lines))
             if lines[j].strip().startswith(fence[0] * len(fence)) and not lines[j].strip().strip(fence[0])),
            None,
        )
        if end is None:
            return blocks, True, prose
        blocks.append(CodeBlock(lang, "\n".join(lines[i + 1 : end]) + "\n", i))
        i = end + 1
    return blocks, False, prose


#: a line that reads as code, not prose: an import, a definition, a decorator, an assignment, a call,
#: a block's opening or closing, an LLVM definition or a C preprocessor line
_CODE_LINE = re.compile(r"^(?:\s*(?:import |from \S+ import |def |class |@\w|return\b|for |if |#include"
                        r"|define |declare )|\s*[\w.\[\]]+\s*=[^=]|\s*\w[\w.]*\(.*\)\s*$|\s*[{}]\s*$|\s{4,}\S)")


def _closing_fence_only(text: str) -> bool:
    """Whether the one fence of ``text`` is a bare ``` (no language) on its
    last non-blank line with code-like lines before it: a code block whose
    opening line was left out, not an answer cut off after an opening fence."""
    lines = [line for line in text.splitlines() if line.strip()]
    fences = [i for i, line in enumerate(lines) if _FENCE.match(line)]
    if fences != [len(lines) - 1] or _FENCE.match(lines[-1]).group(2):
        return False
    return sum(1 for line in lines[:-1] if _CODE_LINE.match(line)) >= 2


def looks_cut_off(text: str) -> bool:
    """Whether ``text`` ends inside a fenced code block or a SEARCH/REPLACE
    edit (more ``SEARCH`` markers than ``REPLACE`` ones): an answer still
    being written, or one cut off. The queue provider waits longer before it
    reads such an answer file (:mod:`kstrata.llm.file_queue`)."""
    lines = text.splitlines()
    searches = sum(1 for line in lines if _SEARCH.match(line))
    if searches:
        return searches > sum(1 for line in lines if _REPLACE.match(line))
    return code_blocks(text)[1]


def edit_blocks(text: str) -> tuple[list[Edit], list[str]]:
    """SEARCH/REPLACE edits of ``text`` and the lines outside them.

    Raises
    ------
    ParseError
        ``truncated`` when the text ends inside an edit block, ``malformed_edit``
        when markers are out of order.
    """
    edits: list[Edit] = []
    prose: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if _DIVIDER.match(lines[i]) or _REPLACE.match(lines[i]):
            raise ParseError(
                "malformed_edit",
                f"edit block {len(edits) + 1}: a '{lines[i].strip()}' line without a "
                "'<<<<<<< SEARCH' line before it.",
                edit=len(edits) + 1,
            )
        if not _SEARCH.match(lines[i]):
            prose.append(lines[i])
            i += 1
            continue
        n = len(edits) + 1
        div = next((j for j in range(i + 1, len(lines)) if _DIVIDER.match(lines[j])), None)
        if div is not None and any(_SEARCH.match(x) or _REPLACE.match(x) for x in lines[i + 1 : div]):
            raise ParseError("malformed_edit", f"edit block {n}: a marker inside its SEARCH part.", edit=n)
        end = None if div is None else next(
            (j for j in range(div + 1, len(lines)) if _REPLACE.match(lines[j])), None
        )
        if div is None or end is None:
            raise ParseError(
                "truncated",
                f"edit block {n} is not closed (no '=======' or '>>>>>>> REPLACE' line): the "
                "answer looks cut off before its end (written in part, or a marker left out; it did not stop at "
                "the output token limit). Send the complete answer again, every edit closed by its "
                "'>>>>>>> REPLACE' line.",
                edit=n,
            )
        if any(_SEARCH.match(x) or _DIVIDER.match(x) for x in lines[div + 1 : end]):
            raise ParseError("malformed_edit", f"edit block {n}: a marker inside its REPLACE part.", edit=n)
        search = "\n".join(lines[i + 1 : div])
        replace = "\n".join(lines[div + 1 : end])
        edits.append(Edit(search + "\n" if search else "", replace + "\n" if replace else ""))
        i = end + 1
    return edits, prose


#: Work one SEARCH part may cost, in all, while it is located with an indentation shift forgiven
#: (each position whose first line fits is compared line by line; a line costs its characters plus
#: :data:`LOCATE_LINE_COST`, so at most 400,000 line comparisons, under a second): an answer whose
#: SEARCH part almost matched everywhere (30,000 lines against 60,000 the same) held kstrata's own
#: process for about 20 minutes (red team rt62); honest edits compare a few thousand.
LOCATE_CHARS = 20_000_000
LOCATE_LINE_COST = 50
#: Characters of current source one answer's edits may read, in all (each edit looks for its SEARCH
#: part in the whole current source): 40,000 edits of a 2 MB source took about a minute (red team rt62).
EDIT_WORK_CHARS = 1_000_000_000
#: An edit's SEARCH text that does not occur is answered with the closest source line: the first
#: HINT_LINES lines are compared, each by its first HINT_LINE_CHARS characters.
HINT_LINES, HINT_LINE_CHARS = 10_000, 200


def _exact_lines(rs: list[str], rp: list[str], limit: int = 2) -> list[tuple[int, int, str]]:
    """Up to ``limit`` positions where the lines ``rp`` occur in ``rs`` as a run
    of whole lines, found with one string search each (linear in their
    length): lines hold no newline, so a match of the newline-framed text
    starts at a line start."""
    import bisect

    text, needle = "\n" + "\n".join(rs) + "\n", "\n" + "\n".join(rp) + "\n"
    starts, at = [], 0
    for line in rs:
        starts.append(at)
        at += len(line) + 1
    hits: list[tuple[int, int, str]] = []
    p = text.find(needle)
    while p >= 0 and len(hits) < limit:
        i = bisect.bisect_left(starts, p)
        hits.append((i, i + len(rp), ""))
        p = text.find(needle, p + 1)
    return hits


def _locate(source: str, search: str, n_edit: int = 1) -> list[tuple[int, int, str]]:
    """Where ``search`` matches ``source``: ``(start_line, end_line, indent)``
    matches by line, with trailing whitespace ignored and, if that finds
    nothing, one indentation prefix added to (or removed from) every line; at
    most two (more is ambiguous anyway).

    Raises
    ------
    ParseError
        ``edit_no_match`` when the indentation-forgiving search would compare
        more than :data:`LOCATE_CHARS` (lines compared)."""
    src = source.splitlines()
    pat = search.splitlines()
    n = len(pat)
    if not n:
        return []
    rs = [line.rstrip() for line in src]
    rp = [line.rstrip() for line in pat]
    hits = _exact_lines(rs, rp)
    if hits:
        return hits
    first = next((k for k, line in enumerate(rp) if line.strip()), None)
    if first is None:
        return []
    b = rp[first]
    stripped = b.lstrip()
    base = b[: len(b) - len(stripped)]
    work = 0
    for i in range(len(src) - n + 1):
        a = rs[i + first]
        if not a.endswith(stripped):
            continue
        shift = a[: len(a) - len(stripped)]
        for p, s in zip(rp, rs[i : i + n]):
            work += len(p) + LOCATE_LINE_COST
            if not ((not p.strip() and not s.strip()) or _reindent(p, base, shift) == s):
                break
        else:
            hits.append((i, i + n, f"{base}\0{shift}"))
            if len(hits) > 1:
                return hits
        if work > LOCATE_CHARS:
            raise ParseError(
                "edit_no_match",
                f"the SEARCH text of edit block {n_edit} does not occur in the current source as it is, and "
                "finding it with its indentation changed would take too long (its lines nearly match in too many "
                "places). Copy SEARCH lines exactly from the current source, only as many as make it unique.",
                edit=n_edit,
            )
    return hits


def _reindent(line: str, old: str, new: str) -> str | None:
    if not line.strip():
        return line
    return new + line[len(old) :] if line.startswith(old) else None


def apply_edits(source: str, edits: list[Edit] | tuple[Edit, ...]) -> str:
    """Apply ``edits`` to ``source`` in order.

    Raises
    ------
    ParseError
        ``edit_no_match`` (with the closest lines of the current source),
        ``edit_ambiguous`` (SEARCH occurs more than once) or ``malformed_edit``
        (an empty SEARCH on a non-empty source); ``too_long`` when the edits
        would read more than :data:`EDIT_WORK_CHARS` characters of source.
    """
    work = 0
    for n, e in enumerate(edits, 1):
        work += len(source) + len(e.search)
        if work > EDIT_WORK_CHARS:
            raise ParseError(
                "too_long",
                f"its {len(edits)} edits of a source of {len(source)} characters would take too long to apply "
                f"(edit block {n} and later were not). Send fewer SEARCH/REPLACE edits, each covering the lines "
                "that change together, or the whole source in one code block.",
                edit=n,
            )
        if not e.search.strip():
            if source.strip():
                raise ParseError(
                    "malformed_edit",
                    f"edit block {n} has an empty SEARCH part; copy the lines to replace into it.",
                    edit=n,
                )
            source = e.replace
            continue
        count = source.count(e.search)
        if count == 1:
            source = source.replace(e.search, e.replace, 1)
            continue
        if count > 1:
            raise _ambiguous(n, count)
        hits = _locate(source, e.search, n)
        if len(hits) > 1:
            raise _ambiguous(n, len(hits))
        if not hits:
            raise _no_match(n, source, e.search)
        start, end, indent = hits[0]
        lines = source.splitlines(keepends=True)
        replacement = e.replace
        if indent:
            old, new = indent.split("\0")
            replacement = "".join(
                (_reindent(line, old, new) or line) for line in e.replace.splitlines(keepends=True)
            )
        source = "".join(lines[:start]) + replacement + "".join(lines[end:])
    return source


def _ambiguous(n: int, count: int) -> ParseError:
    return ParseError(
        "edit_ambiguous",
        f"the SEARCH text of edit block {n} occurs {count} times in the current source; "
        "include more surrounding lines so it matches exactly once.",
        edit=n,
        matches=count,
    )


def _no_match(n: int, source: str, search: str) -> ParseError:
    src = source.splitlines()
    first = next((line for line in search.splitlines() if line.strip()), "")
    # the hint compares line beginnings of the first lines only: difflib's ratio on whole lines of
    # 30,000 characters took 79 s for a 2 MB answer (red team rt62)
    heads = [line[:HINT_LINE_CHARS] for line in src[:HINT_LINES]]
    close = difflib.get_close_matches(first[:HINT_LINE_CHARS], heads, n=1, cutoff=0.5)
    hint = ""
    if close:
        k = heads.index(close[0])
        snippet = "\n".join(src[k : k + max(3, min(8, len(search.splitlines())))])
        hint = f" The closest lines of the current source start at line {k + 1}:\n{snippet}\n"
    return ParseError(
        "edit_no_match",
        f"the SEARCH text of edit block {n} does not occur in the current source (its first "
        f"line is {first.strip()!r}).{hint} Copy SEARCH lines exactly from the current source.",
        edit=n,
    )


def _is_diff(block: CodeBlock) -> bool:
    """Whether ``block`` is a unified diff: tagged ``diff``/``patch``, or its
    body has a ``@@ -a,b +c,d @@`` hunk header."""
    return block.language in ("diff", "patch") or bool(re.search(r"^@@ -\d+(?:,\d+)? \+\d+", block.body, re.M))


def _code_like(blocks: list[CodeBlock], language: str | None) -> list[CodeBlock]:
    out = [b for b in blocks if b.body.strip() and b.language not in NON_CODE_LANGUAGES and not _is_diff(b)]
    if language:
        tagged = [b for b in out if b.language in ("", language.lower())]
        out = tagged or out
    return out


def parse_answer(
    text: str,
    current: str,
    *,
    finish_reason: str | None = None,
    language: str | None = None,
) -> ParsedAnswer:
    """Parse a model answer against the ``current`` source of the edited level.

    Parameters
    ----------
    text:
        The answer, as the model gave it.
    current:
        The level's current source ("" when the level has none yet).
    finish_reason:
        The API's stop reason; a token-limit stop is ``truncated``.
    language:
        The expected fence language (e.g. ``"python"``); blocks tagged with
        another language are then ignored when a matching one exists.

    Raises
    ------
    ParseError
        For every malformed answer; see the module docstring.
    """
    if len(text) > MAX_ANSWER_CHARS:
        raise ParseError(
            "too_long",
            f"it is {len(text)} characters, over the {MAX_ANSWER_CHARS} an answer may have. Send SEARCH/REPLACE "
            "edits of only the lines that change, or the source alone, with little prose.",
            chars=len(text),
        )
    if (finish_reason or "").lower() in TRUNCATED_REASONS:
        raise ParseError(
            "truncated",
            "it was cut off at the output token limit. Send a shorter answer: SEARCH/REPLACE "
            "edits of only the lines that change instead of the whole source, and less prose.",
            finish_reason=finish_reason,
        )
    if any(_SEARCH.match(line) or _REPLACE.match(line) for line in text.splitlines()):
        edits, prose = edit_blocks(text)
        source = apply_edits(current, edits)
        mode: Literal["full", "edits"] = "edits"
        prose = [line for line in prose if not _FENCE.match(line)]
    else:
        blocks, unclosed, prose = code_blocks(text)
        if unclosed and _closing_fence_only(text):
            # queue round rt72: the code sent as prose and one ``` line after it was told "cut off"
            tag = f"```{language}" if language else "```python"
            raise ParseError(
                "no_opening_fence",
                f"its only code fence is a bare ``` line at the end, after the code: the opening {tag} line "
                "before the code is missing, so the code reads as prose (the answer is not cut off). Send the "
                f"answer again with the code between a {tag} line and a ``` line.",
            )
        if unclosed:
            raise ParseError(
                "truncated",
                "a code block is opened with ``` but never closed: the answer looks cut off before its end "
                "(written in part, or its closing ``` left out; it did not stop at the output token limit). "
                "Send the complete answer again, its code block closed by a ``` line.",
            )
        code = _code_like(blocks, language)
        if not code and any(_is_diff(b) for b in blocks):
            # queue round rt63: a ```diff answer read as "no code block", then (no retry left) as a decline
            raise ParseError(
                "diff_block",
                "it sends its change as a unified diff (a ```diff block), which kstrata does not apply. Send the "
                "same change as SEARCH/REPLACE edits of the current text (its lines copied exactly) or as the "
                "complete new text in one code block.",
                blocks=len(blocks),
            )
        if not code:
            raise ParseError("no_code", "it contains no code block.", blocks=len(blocks))
        distinct = {b.body.strip() for b in code}
        if len(distinct) > 1:
            lines = ", ".join(str(b.line + 1) for b in code)
            raise ParseError(
                "conflicting_blocks",
                f"it contains {len(code)} different code blocks (starting at answer lines {lines}) "
                "and it is not clear which one is the new source. Send exactly one block with "
                "the complete source, or SEARCH/REPLACE edits.",
                blocks=len(code),
            )
        source, mode, edits = code[0].body, "full", []
    if source.strip() == current.strip():
        raise ParseError(
            "unchanged",
            "the resulting source is identical to the current one. Make an actual change.",
        )
    rationale = "\n".join(prose).strip()[:2000]
    return ParsedAnswer(source=source, mode=mode, rationale=rationale, edits=tuple(edits))


def answer_to_sources(
    text: str,
    sources: Mapping[str, str],
    level: str,
    *,
    finish_reason: str | None = None,
    language: str | None = None,
) -> tuple[dict[str, str], ParsedAnswer]:
    """The candidate's complete sources after applying the answer to ``level``.

    Returns
    -------
    (sources, parsed)
        ``sources`` with ``level`` replaced by the parsed source (other levels
        unchanged), and the :class:`ParsedAnswer`.

    Raises
    ------
    ParseError
        See :func:`parse_answer`.
    """
    parsed = parse_answer(
        text, sources.get(level, ""), finish_reason=finish_reason, language=language
    )
    return {**sources, level: parsed.source}, parsed


def is_null_request(text: str) -> bool:
    """Whether a request's text asks for nothing: ``none``, ``none needed``,
    ``no graph change needed``, ``n/a``, ``nothing to do``, ... (an agent that
    fills the request line to say it has no request)."""
    return not (text or "").strip() or bool(_NULL_REQUEST.match(text))


#: longest text of one cross-level request, and of a decline's diagnosis, that is kept (then cut, marked)
REQUEST_CHARS = 1000
DIAGNOSIS_CHARS = 2000


def clip_marked(text: str, limit: int) -> str:
    """``text`` whole when it fits in ``limit`` characters, else cut at the
    last word boundary before it, with a marker saying how much was left out
    (``[... cut: 312 more characters]``); never mid-word, never silently
    (queue round: a relayed request ended "...because the sh")."""
    text = text or ""
    if len(text) <= limit:
        return text
    head = text[:limit]
    if not text[limit].isspace() and " " in head.strip():
        head = head.rsplit(" ", 1)[0]
    head = head.rstrip(" ,;:")
    return f"{head} [... cut: {len(text) - len(head)} more characters]"


def parse_cross_level_requests(text: str) -> list[dict[str, str]]:
    """``[{"level", "text"}]`` for each ``CROSS-LEVEL REQUEST: <level>: <text>``
    line of an agent's answer (case-insensitive; leading ``-``/``*`` allowed;
    the level as written or wrapped as the answer format shows it, ``<graph>``,
    or in ``[]``, backticks, ``**``; the text cut at :data:`REQUEST_CHARS`, marked). A line whose
    text asks for nothing (:func:`is_null_request`: ``graph: none needed``) is no request."""
    return [{"level": m.group(1).lower(), "text": clip_marked(m.group(2).strip(), REQUEST_CHARS)} for m in _REQUEST.finditer(text or "")
            if not is_null_request(m.group(2))]


def placeable_requests(requests: Sequence[Mapping[str, str]], offered: Sequence[str]
                       ) -> tuple[list[dict[str, str]], str]:
    """``requests`` split by whether their level is among ``offered`` (the
    levels the prompt named for requests; an empty ``offered`` keeps all):
    the kept ones, and a note for the others (``""`` when none). Queue round
    rt89: a tvm-llvm graph agent, offered only ``schedule``, declined with a
    request to ``source`` (no source level in that run), and the next prompts
    read "(asked source: ...)" as if someone would act on it. Used for
    declines (:func:`kstrata.agents.llm_agent.ask`); a request beside code
    stays open, and the router says "nothing to edit there" itself."""
    if not offered:
        return [dict(r) for r in requests], ""
    kept = [dict(r) for r in requests if r["level"] in offered]
    lost = sorted({r["level"] for r in requests if r["level"] not in offered})
    if not lost:
        return kept, ""
    return kept, (f" (its request to {', '.join(lost)} was dropped: no {'/'.join(lost)} level can be edited on this "
                  f"candidate; requests can go to {', '.join(offered)})")


@dataclass(frozen=True)
class Decline:
    """An answer that makes no change at its level and says why.

    Attributes
    ----------
    diagnosis:
        Why this level cannot fix the candidate (the ``DIAGNOSIS:`` text, else
        the answer's prose), at most 1000 characters.
    requests:
        ``({"level", "text"}, ...)``: what the agent asks another level to do.
    """

    diagnosis: str
    requests: tuple[dict[str, str], ...] = ()


def has_code(text: str) -> bool:
    """Whether ``text`` holds a code block or a SEARCH/REPLACE edit (a change)."""
    if any(_SEARCH.match(line) for line in (text or "").splitlines()):
        return True
    blocks, _, _ = code_blocks(text or "")
    return bool(_code_like(blocks, None))


def parse_decline(text: str, level: str | None = None) -> Decline | None:
    """The decline in ``text``, or ``None`` when it is not one.

    An answer declines when it holds no code block and no SEARCH/REPLACE edit
    (an answer with code is a change; its requests are read by
    :func:`parse_cross_level_requests`) and either has a line starting with
    ``DECLINE`` or says so in words ("no change", "I decline", "nothing to
    change", "leave it unchanged", "cannot be improved", ...). Requests for
    ``level`` itself (the level the agent was asked to edit) are dropped.

    Parameters
    ----------
    text:
        The model's answer.
    level:
        The level the answer was asked to edit.
    """
    text = text or ""
    if not (_DECLINE.search(text) or _DECLINE_PHRASE.search(text)) or has_code(text):
        return None
    return as_decline(text, level)


def as_decline(text: str, level: str | None = None) -> Decline:
    """``text`` read as a decline, whatever its form: the ``DIAGNOSIS:`` text
    (else the prose, ``DECLINE`` and request lines left out) and the
    ``CROSS-LEVEL REQUEST`` lines; without such lines, and only in free prose
    without a ``DIAGNOSIS:`` line, a request to the one other level the prose
    names ("the schedule level ...": the sentence that names it). Used for
    explicit declines and for answers that make no change (code identical to
    the current text, prose without code).

    Parameters
    ----------
    text:
        The model's answer.
    level:
        The level the answer was asked to edit (requests for it are dropped).
    """
    text = text or ""
    blocks, _, prose_lines = code_blocks(text)
    lines = prose_lines if blocks else text.splitlines()
    lines = [ln for ln in lines if not (_SEARCH.match(ln) or _DIVIDER.match(ln) or _REPLACE.match(ln))]
    diagnosis: list[str] = []
    for i, line in enumerate(lines):
        m = _DIAGNOSIS.match(line)
        if m:
            diagnosis = [m.group(1).strip()]
            for more in lines[i + 1:]:
                if not more.strip() or _REQUEST_LINE.match(more) or _DECLINE.match(more):
                    break
                diagnosis.append(more.strip())
            break
    if not diagnosis:
        diagnosis = [ln.strip() for ln in lines
                     if ln.strip() and not _REQUEST_LINE.match(ln) and not _DECLINE.match(ln)]
        head = _DECLINE.search(text)
        if head and head.group(1).strip():
            diagnosis.insert(0, head.group(1).strip())
    joined = " ".join(d for d in diagnosis if d)
    requests = tuple(r for r in parse_cross_level_requests(text) if r["level"] != level)
    formatted = any(_DIAGNOSIS.match(ln) for ln in lines)
    if not requests and not formatted and not any(_REQUEST_LINE.match(ln) for ln in text.splitlines()):
        # free prose without the decline format and no request line: the one other level the
        # prose names (a request line that asks for nothing, "graph: none needed", means no
        # request). An answer in the format (DIAGNOSIS:) that has no request line makes none: its
        # prose may name a level in passing ("I asked the graph level for that and it was
        # served", model-in-the-loop round m22), which was stored and routed as a request
        requests = _named_requests(joined, level)
    return Decline(clip_marked(joined, DIAGNOSIS_CHARS), requests)


def _named_requests(prose: str, level: str | None) -> tuple[dict[str, str], ...]:
    """A request to the one other level ``prose`` names (its first sentence
    naming it as the request's text); none when it names no other level or several."""
    named = {m.group(1).lower() for m in _LEVEL_MENTION.finditer(prose)} - {level}
    if len(named) != 1:
        return ()
    (other,) = named
    for sentence in re.split(r"(?<=[.!?;])\s+", prose):
        if re.search(rf"\b{other}[- ](?:level|agent|role)", sentence, re.IGNORECASE):
            return ({"level": other, "text": clip_marked(sentence.strip(), REQUEST_CHARS)},)
    return ()
