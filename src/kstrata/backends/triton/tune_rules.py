"""Parameter and structural variants of a Triton candidate, made by editing its text.

The autotuner layer of the ``triton*`` backends (the built-in proposer,
:class:`kstrata.agents.builtin.TritonTuneProposer`, proposes these). Candidate
text is hostile, so nothing here imports, executes or parses it: every variant
is a text edit located by regular expressions and a bracket matcher that skips
strings and comments.

Tunables
--------
*Marked* (the shipped kernels, and any user kernel that adopts the convention):
a module-level integer constant with its choices in a trailing comment::

    BLOCK = 1024  # kstrata-tune: {256, 512, 1024, 2048, 4096}
    CHUNK = 2048  # kstrata-tune: {1024, 2048, 4096} if TWO_PASS

``if NAME`` makes the tunable matter only while the marked tunable ``NAME`` is
non-zero (so no evaluation is spent on a value nothing reads).

*Detected* (only in files without markers, i.e. user kernels):

* an unmarked module-level ``UPPER_NAME = <int>`` whose name is a
  ``NAME: tl.constexpr`` parameter of a ``@triton.jit`` kernel or is passed as
  ``num_warps=NAME``/``num_stages=NAME``;
* a literal keyword at a launch site, ``kernel[grid](..., BLOCK_SIZE=1024,
  num_warps=4)``: an upper-case constexpr keyword, ``num_warps`` or ``num_stages``.

A tunable passed to a kernel as a constexpr is tuned only where each
launch's grid follows it (:func:`grid_link`): the grid reads it by name or as
``meta['NAME']``, or does not mention its value; where the grid has the value
written as the divisor of ``cdiv`` (once per axis whose program id the kernel
scales by it), that literal is changed with it; any other copy (a separate
constant, ``(n + 255) // 256``) holds it back, with a reason
(:func:`held_tunables`), since changing one alone changes what the kernel
computes (outputs left unwritten).

Choices of a detected tunable come from its name: ``*WARPS*`` → 1…16,
``*STAGES*`` → 1…5, ``*GROUP*``/``*ROWS*`` → 1…16, otherwise a block size:
powers of two from a quarter to four times the value (within 16…16384; only
for a power-of-two value).

Sweeps (autotune-style, no model)
--------------------------------
:func:`sweep_variants` sets several tunables at once, like a
``triton.autotune`` config list: for a GEMM-like kernel (``BLOCK_M``,
``BLOCK_N``, ``BLOCK_K``, ``GROUP_M``, ``NUM_WARPS``, ``NUM_STAGES``) the
configurations of Triton's matmul tutorial (``03-matrix-multiplication.py``,
``get_cuda_autotune_config``); for any other kernel a diagonal through its
marked tunables, from every choice's low end to its high end together
(small blocks with few warps up to large blocks with many, one pass up to
two passes over large chunks), since block size and warps grow together.
One-parameter moves then refine around the best.

Structural variants (mechanical, no model)
------------------------------------------
* **rows per program** (:func:`rows_per_program`): a kernel whose first
  statement is ``row = tl.program_id(0)...`` and whose every launch has a 1-D
  grid ``(rows,)`` gets a ``ROWS_PER_PROG`` loop around its body, a bounds
  guard and a grid of ``cdiv(rows, ROWS_PER_PROG)``; for short rows, where one
  row is too little work for a program.
* **launch configuration**: a file that never sets ``num_warps`` gets a marked
  ``NUM_WARPS`` passed at every launch (not for ``triton.autotune`` kernels,
  whose configs set it).
* **two-pass split** of a long-row reduction: the shipped row kernels carry a
  chunked two-pass kernel behind the marked switch ``TWO_PASS`` (statistics
  over chunks of ``CHUNK`` columns, then a second pass that normalizes), so it
  is one tunable here; a generic text rewrite of an arbitrary reduction is not
  mechanical.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field

#: choices for detected tunables, by a word in the name
NAMED_CHOICES = (
    ("WARPS", (1, 2, 4, 8, 16)),
    ("STAGES", (1, 2, 3, 4, 5)),
    ("GROUP", (1, 2, 4, 8, 16)),
    ("ROWS", (1, 2, 4, 8, 16)),
)
#: block sizes a detected power-of-two block may take
BLOCK_RANGE = (16, 16384)
#: rows per program tried by the structural variant
ROWS_CHOICES = (1, 2, 4, 8, 16)
def malformed(text: str) -> list[str]:
    """A message per ``# kstrata-tune:`` marker of ``text`` the tuner cannot
    read (regular expressions only): not at the end of a module-level
    ``NAME = <int>`` line, or choices not written ``{A, B, ...}`` (integers,
    optionally ``if NAME``), e.g. ``BLOCK = 1024  # kstrata-tune: 256..4096``.
    Each names the line number, the line and the syntax."""
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        if re.search(r"#[ \t]*kstrata-tune\b", line) and not _MARKED.match(line):
            out.append(f"line {no}: cannot read `{line.strip()[:160]}`: a marked tunable is a module-level "
                       "integer constant with its choices in braces, e.g. `BLOCK = 1024  # kstrata-tune: "
                       "{256, 512, 1024, 2048}` (optionally `if NAME` after them)")
    return out


#: num_warps values inserted by the launch-configuration variant
INSERTED_WARPS = (2, 8)

_MARKED = re.compile(
    r"^(?P<name>[A-Za-z_]\w*)[ \t]*=[ \t]*(?P<value>\d+)[ \t]*#[ \t]*kstrata-tune:[ \t]*"
    r"\{(?P<choices>[\d,\s]*)\}(?:[ \t]+if[ \t]+(?P<cond>[A-Za-z_]\w*))?[^\n]*$", re.M)
_MODULE_INT = re.compile(r"^(?P<name>[A-Z][A-Z0-9_]*)[ \t]*=[ \t]*(?P<value>\d+)[ \t]*$", re.M)
_JIT_DEF = re.compile(r"^@triton\.jit\b[^\n]*\n(?:@[^\n]*\n)*def[ \t]+(?P<name>\w+)[ \t]*\(", re.M)
_LAUNCH_KW = re.compile(r"\b(?P<name>[A-Z][A-Z0-9_]*|num_warps|num_stages)[ \t]*=[ \t]*(?P<value>\d+)\b(?![.\w])")
_PID = re.compile(r"^(?P<indent>[ \t]+)(?P<var>\w+)[ \t]*=[ \t]*(?P<expr>tl\.program_id\(0\)(?:\.to\(tl\.u?int(?:32|64)\))?)[ \t]*(?:#[^\n]*)?$")


@dataclass(frozen=True)
class Tunable:
    """One integer choice in a candidate's text.

    Attributes
    ----------
    name:
        The constant or keyword name (``BLOCK``, ``num_warps``, ...).
    value:
        Its current value.
    choices:
        The values it may take, ascending (``value`` among them).
    start, end:
        Character span of the value's literal in the text.
    origin:
        ``"marked"``, ``"module"`` (a detected constant) or ``"launch"`` (a
        literal keyword at a launch site).
    condition:
        A marked tunable's ``if NAME``: it matters only while ``NAME`` is non-zero.
    also:
        Spans of the same value written in a launch's grid (``cdiv(n, 256)``
        beside ``BLOCK_SIZE=256``), set together with it (:func:`grid_link`).
    """

    name: str
    value: int
    choices: tuple[int, ...]
    start: int
    end: int
    origin: str
    condition: str | None = None
    also: tuple[tuple[int, int], ...] = ()

    @property
    def label(self) -> str:
        """``name`` plus, for a launch keyword, where it is (several launches may set one)."""
        return f"{self.name}@{self.start}" if self.origin == "launch" else self.name


@dataclass(frozen=True)
class Variant:
    """A new candidate text and what made it.

    Attributes
    ----------
    text:
        The full new source.
    rule:
        ``"tune"``, ``"sweep"``, ``"rows-per-program"`` or ``"launch-config"``.
    description:
        One line for the tree and the report.
    params:
        The changed parameters, ``{name: new value}``.
    """

    text: str
    rule: str
    description: str
    params: dict[str, int] = field(default_factory=dict)


# -- lexical helpers ------------------------------------------------------------

_OPEN, _CLOSE = "([{", ")]}"


def match_bracket(text: str, pos: int) -> int:
    """Index of the bracket closing the one at ``text[pos]``, skipping string
    literals and ``#`` comments; -1 when unbalanced."""
    depth, i, n = 0, pos, len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            q = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else c
            j = text.find(q, i + len(q))
            while j != -1 and len(q) == 1 and text[j - 1] == "\\":
                j = text.find(q, j + 1)
            if j == -1:
                return -1
            i = j + len(q)
            continue
        if c == "#":
            j = text.find("\n", i)
            i = n if j == -1 else j
            continue
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Replace each ``(start, end, new)`` span, applied back to front."""
    for start, end, new in sorted(edits, key=lambda e: e[0], reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _insert_kwargs(text: str, close: int, kwargs: str) -> tuple[int, int, str]:
    """The edit that adds ``kwargs`` before the call's closing paren at ``close``
    (after any trailing comma and whitespace)."""
    j = close
    while j > 0 and text[j - 1] in " \t\n,":
        j -= 1
    return j, close, f", {kwargs}"


def jit_kernels(text: str) -> dict[str, tuple[int, int]]:
    """``{kernel name: (index of "(", index of ")")}`` of the signature of each
    module-level ``@triton.jit`` function."""
    out = {}
    for m in _JIT_DEF.finditer(text):
        open_ = m.end() - 1
        close = match_bracket(text, open_)
        if close != -1:
            out[m.group("name")] = (open_, close)
    return out


def launches(text: str, kernel: str) -> list[tuple[int, int, int, int]]:
    """Launch sites ``kernel[grid](args)``: ``(grid "[", grid "]", args "(", args ")")``."""
    out = []
    for m in re.finditer(rf"(?<![\w.]){re.escape(kernel)}\[", text):
        gopen = m.end() - 1
        gclose = match_bracket(text, gopen)
        if gclose == -1 or gclose + 1 >= len(text) or text[gclose + 1] != "(":
            continue
        aclose = match_bracket(text, gclose + 1)
        if aclose != -1:
            out.append((gopen, gclose, gclose + 1, aclose))
    return out


def _detected_choices(name: str, value: int) -> tuple[int, ...]:
    for word, choices in NAMED_CHOICES:
        if word in name.upper():
            return tuple(sorted({*choices, value}))
    if value < 2 or value & (value - 1):
        return ()
    lo, hi = BLOCK_RANGE
    return tuple(v for v in (value // 4, value // 2, value, value * 2, value * 4) if lo <= v <= hi or v == value)


# -- tunables -------------------------------------------------------------------

def find_tunables(text: str) -> list[Tunable]:
    """The marked and detected tunables of ``text``, in text order (see the
    module docstring), less those a launch's grid does not follow
    (:func:`grid_link`; :func:`held_tunables` says why)."""
    return _scan(text)[0]


def held_tunables(text: str) -> list[str]:
    """Why each tunable of ``text`` left untuned was held back: a launch
    constexpr whose grid has the same value written apart from it (a literal
    or another constant) that is not provably the same quantity; one line each."""
    return _scan(text)[1]


def _scan(text: str) -> tuple[list[Tunable], list[str]]:
    """``(tunables, reasons held)`` of ``text`` (see :func:`find_tunables`)."""
    out: list[Tunable] = []
    marked = set()
    for m in _MARKED.finditer(text):
        choices = tuple(sorted({int(c) for c in re.findall(r"\d+", m.group("choices"))} | {int(m.group("value"))}))
        out.append(Tunable(m.group("name"), int(m.group("value")), choices, m.start("value"), m.end("value"),
                           "marked", m.group("cond")))
        marked.add(m.group("name"))
    kernels = jit_kernels(text)
    if out:  # the author declared the space: nothing is guessed beside it
        return _grid_checked(text, kernels, out)
    constexprs = set()
    for open_, close in kernels.values():
        constexprs |= set(re.findall(r"(\w+)[ \t]*:[ \t]*tl\.constexpr", text[open_:close]))
    launch_spans = [ln for k in kernels for ln in launches(text, k)]
    warp_names = set()
    for _, _, aopen, aclose in launch_spans:
        warp_names |= set(re.findall(r"\bnum_(?:warps|stages)[ \t]*=[ \t]*([A-Za-z_]\w*)", text[aopen:aclose]))
    for m in _MODULE_INT.finditer(text):
        name = m.group("name")
        if name not in constexprs and name not in warp_names:
            continue
        value = int(m.group("value"))
        choices = _detected_choices(name, value)
        if len(choices) > 1:
            out.append(Tunable(name, value, choices, m.start("value"), m.end("value"), "module"))
    for _, _, aopen, aclose in launch_spans:
        for m in _LAUNCH_KW.finditer(text, aopen, aclose):
            name, value = m.group("name"), int(m.group("value"))
            if name not in constexprs and not name.startswith("num_"):
                continue
            choices = _detected_choices(name, value)
            if len(choices) > 1:
                out.append(Tunable(name, value, choices, m.start("value"), m.end("value"), "launch"))
    return _grid_checked(text, kernels, sorted(out, key=lambda t: t.start))


# -- grids ----------------------------------------------------------------------
#
# A launch constexpr the tuner changes must be one the launch's grid follows
# (newcomer nc20: ``grid = (triton.cdiv(n, 256),)`` beside ``BLOCK_SIZE=256``
# was moved to ``BLOCK_SIZE=128`` alone, so half the outputs were never
# written). The grid follows a tunable that it reads by name (the constant, or
# ``meta['BLOCK_SIZE']`` in a lambda) or that it does not mention; the same
# value written in the grid as the divisor of ``cdiv`` (once per axis, the
# kernel's program id on that axis scaled by that constexpr) is changed with it; any other copy of
# the value in the grid (a literal elsewhere, a separate constant) holds the
# tunable back.

_INT_ASSIGN = r"^[ \t]*{name}[ \t]*=[ \t]*(?P<value>\d+)[ \t]*(?:#[^\n]*)?$"


def _statement_end(text: str, pos: int) -> int:
    """End of the logical line starting at ``pos`` (brackets may span lines)."""
    i, n = pos, len(text)
    while i < n and text[i] != "\n":
        if text[i] in _OPEN:
            close = match_bracket(text, i)
            if close == -1:
                return n
            i = close
        elif text[i] == "#":
            break
        i += 1
    return i


def _grid_span(text: str, gopen: int, gclose: int) -> tuple[int, int, str | None]:
    """``(start, end, variable)`` of a launch's grid expression: inside its
    brackets, or, for ``kernel[grid]``, the right side of the nearest earlier
    ``grid = ...`` (``variable`` its name, else ``None``)."""
    inner = text[gopen + 1:gclose].strip()
    if re.fullmatch(r"[A-Za-z_]\w*", inner):
        found = list(re.finditer(rf"^[ \t]*{inner}[ \t]*=(?!=)[ \t]*", text[:gopen], re.M))
        if found:
            start = found[-1].end()
            return start, _statement_end(text, start), inner
    return gopen + 1, gclose, None


def _int_value(text: str, name: str, before: int) -> int | None:
    """The integer last assigned to ``name`` before ``before`` (``NAME = 256``), else ``None``."""
    found = list(re.finditer(_INT_ASSIGN.format(name=re.escape(name)), text[:before], re.M))
    found = found or list(re.finditer(_INT_ASSIGN.format(name=re.escape(name)), text, re.M))
    return int(found[-1].group("value")) if found else None


def _scales_program_id(text: str, kernel: str, kw: str, axis: int) -> bool:
    """Whether ``kernel``'s body multiplies its program id on ``axis`` by ``kw``."""
    sig = jit_kernels(text).get(kernel)
    if sig is None:
        return False
    body_end = re.compile(r"^\S", re.M).search(text, sig[1] + 1)
    body = text[sig[1]:body_end.start() if body_end else len(text)]
    pid = rf"tl\.program_id\(\s*(?:axis\s*=\s*)?{axis}\s*\)"
    names = [re.escape(m.group(1)) for m in re.finditer(rf"^[ \t]*(\w+)[ \t]*=[ \t]*{pid}", body, re.M)]
    factor = "|".join([pid, *names])
    return bool(re.search(rf"(?:{factor})\s*\*\s*{kw}\b|\b{kw}\s*\*\s*(?:{factor})", body))


def _cdiv_axis(grid: str, pos: int, end: int) -> int | None:
    """The grid axis of a literal at ``grid[pos:end]`` that is the last argument of a
    ``cdiv(...)`` call, else ``None``."""
    depth, i = 0, pos - 1
    while i >= 0:
        if grid[i] in _CLOSE:
            depth += 1
        elif grid[i] in _OPEN:
            if depth == 0:
                break
            depth -= 1
        i -= 1
    if i < 0 or grid[i] != "(" or not re.search(r"\bcdiv\s*$", grid[:i]):
        return None
    if not re.search(r",\s*$", grid[i + 1:pos]) or not re.match(r"\s*\)", grid[end:]):
        return None
    inner = grid.strip()
    if inner.startswith("lambda"):
        inner = inner.split(":", 1)[1].strip()
    top = inner[1:] if inner.startswith("(") else inner  # count top-level commas before the call
    offset = grid.find(top)
    depth, axis = 0, 0
    for c in grid[offset:i]:
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif c == "," and depth == 0:
            axis += 1
    return axis


def grid_link(text: str, site: tuple[int, int, int, int], kernel: str, kw: str, value: int,
              own: str | None) -> tuple[tuple[tuple[int, int], ...], str | None]:
    """How a launch's grid relates to a constexpr the tuner would change.

    ``site`` is the launch (:func:`launches`), ``kw`` the constexpr as the
    launch passes it (``BLOCK_SIZE``), ``value`` its current value, ``own``
    the module constant holding it (``None`` for a literal keyword). Returns
    ``(spans, None)``: the grid follows it (reads ``own`` or ``meta['kw']``,
    or has no copy of ``value``; ``spans`` empty) or has ``value`` only as the
    divisor of ``cdiv``, once per axis, on axes whose program id the kernel
    scales by ``kw`` (``spans`` those literals, to change with it); or ``((), reason)``
    when the grid holds the value apart from it and the tuner must not move it.
    """
    gopen, gclose, aopen, aclose = site
    gs, ge, variable = _grid_span(text, gopen, gclose)
    grid = text[gs:ge]
    if own is not None and re.search(rf"(?<![\w.]){re.escape(own)}\b", grid):
        return (), None
    if re.search(rf"\[\s*['\"]{re.escape(kw)}['\"]\s*\]", grid):
        return (), None
    where = f"`{grid.strip()[:80]}`"
    for m in re.finditer(r"(?<![\w.'\"])([A-Za-z_]\w*)\b(?!\s*[(.\[])", grid):
        name = m.group(1)
        passed = re.search(rf"(?<![\w.]){name}\b", text[aopen:aclose])  # the grid follows another argument
        if name not in ("lambda", "triton", "cdiv") and not passed and _int_value(text, name, gs) == value:
            return (), (f"{own or kw} (= {value}) not tuned: the grid {where} reads {name} = {value}, a separate "
                        f"constant; change both together by hand, or have the grid read {own or kw} "
                        f"(`lambda meta: (triton.cdiv(n, meta['{kw}']),)`)")
    hits = list(re.finditer(rf"(?<![\w.]){value}(?![\w.])", grid))
    if not hits:
        return (), None
    axes = [_cdiv_axis(grid, m.start(), m.end()) for m in hits]
    others = [m for m in _LAUNCH_KW.finditer(text, aopen, aclose)
              if int(m.group("value")) == value and m.group("name") != kw and not m.group("name").startswith("num_")]
    shared = variable is not None and len(re.findall(rf"\[\s*{re.escape(variable)}\s*\]\s*\(", text)) > 1
    if (None not in axes and len(set(axes)) == len(axes) and not others and not shared
            and all(_scales_program_id(text, kernel, kw, a) for a in axes)):
        return tuple((gs + m.start(), gs + m.end()) for m in hits), None
    return (), (f"{own or kw} (= {value}) not tuned: the grid {where} has {value} written apart from it, not "
                f"provably the same quantity; changing one without the other would leave outputs unwritten or "
                f"programs out of bounds. Have the grid read it (`lambda meta: (triton.cdiv(n, meta['{kw}']),)` "
                f"or one Python name in both places)")


def _grid_checked(text: str, kernels: dict[str, tuple[int, int]],
                  tunables: list[Tunable]) -> tuple[list[Tunable], list[str]]:
    """``tunables`` with their grid copies (:attr:`Tunable.also`), less those a
    launch's grid does not follow, and a reason per tunable left out."""
    sites = [(k, site) for k in kernels for site in launches(text, k)]
    out, held = [], []
    for t in tunables:
        if t.name.startswith("num_") or "WARPS" in t.name or "STAGES" in t.name:
            out.append(t)  # warps and stages never size the grid
            continue
        spans: list[tuple[int, int]] = []
        reason = None
        for kernel, site in sites:
            _, _, aopen, aclose = site
            if t.origin == "launch":
                if not aopen < t.start < aclose:
                    continue
                passed = [t.name]
            else:
                args = text[aopen:aclose]
                if not re.search(rf"(?<![\w.]){re.escape(t.name)}\b", args):
                    continue
                passed = [m.group(1) for m in re.finditer(rf"\b([A-Za-z_]\w*)\s*=\s*{re.escape(t.name)}\b", args)
                          if not m.group(1).startswith("num_")] or [t.name]
            for kw in passed:
                link, reason = grid_link(text, site, kernel, kw, t.value, None if t.origin == "launch" else t.name)
                if reason:
                    break
                spans.extend(s for s in link if s not in spans)
            if reason:
                break
        if reason:
            held.append(reason)
        else:
            out.append(Tunable(t.name, t.value, t.choices, t.start, t.end, t.origin, t.condition, tuple(spans)))
    return out, held


def with_value(text: str, tunable: Tunable, value: int) -> str:
    """``text`` with ``tunable`` set to ``value`` (and its grid's copy of it, :attr:`Tunable.also`)."""
    return _apply(text, [(s, e, str(value)) for s, e in ((tunable.start, tunable.end), *tunable.also)])


def parameter_variants(text: str, max_distance: int = 2) -> list[list[Variant]]:
    """One-parameter moves: for distance 1..``max_distance``, the variants that
    move one tunable that many places along its choices (a list per distance)."""
    tunables = find_tunables(text)
    values = {t.name: t.value for t in tunables if t.origin == "marked"}
    out: list[list[Variant]] = []
    for d in range(1, max_distance + 1):
        moves = []
        for t in tunables:
            if t.condition is not None and not values.get(t.condition, 1):
                continue
            i = t.choices.index(t.value)
            for j in (i - d, i + d):
                if 0 <= j < len(t.choices):
                    new = t.choices[j]
                    moves.append(Variant(with_value(text, t, new), "tune",
                                         f"{t.name} {t.value} -> {new}" + (" (the grid's copy too)" if t.also else ""),
                                         {t.name: new}))
        out.append(moves)
    return out


# -- structural variants ----------------------------------------------------------

def _constant_line(text: str, line: str) -> tuple[int, int, str] | None:
    """The edit inserting a module-level ``line`` before the first jit kernel's decorators."""
    m = _JIT_DEF.search(text)
    if m is None:
        return None
    pos = m.start()
    while True:  # climb over decorators stacked above @triton.jit
        prev = text.rfind("\n", 0, max(pos - 1, 0))
        prev_line = text[prev + 1:pos]
        if pos > 0 and prev_line.startswith("@"):
            pos = prev + 1
            continue
        break
    return pos, pos, line + "\n\n"


def _body(text: str, sig_close: int) -> tuple[int, int] | None:
    """Span of a module-level function's body: from the line after the
    signature's ``:`` up to the next line starting in column 0."""
    nl = text.find("\n", sig_close)
    head = text[sig_close + 1:nl].split("#")[0].strip() if nl != -1 else ""
    if not (head == ":" or (head.startswith("->") and head.endswith(":"))):
        return None
    start = nl + 1
    m = re.compile(r"^\S", re.M).search(text, start)
    return start, (m.start() if m else len(text))


def rows_per_program(text: str, rows: int) -> str | None:
    """``text`` with every row kernel processing ``rows`` rows per program, or
    ``None`` when no kernel has the form (see the module docstring).

    A kernel qualifies when its first statement assigns ``tl.program_id(0)``
    (optionally cast) to a name, its body has no ``return`` and no other use of
    program ids, its signature has no defaults, and each of its launches has a
    literal 1-D grid ``(expr,)``. The transformed kernel takes two more
    arguments, ``kstrata_n_rows`` (the old grid size, for the bounds guard) and
    ``ROWS_PER_PROG: tl.constexpr``.
    """
    if "ROWS_PER_PROG" in text or not re.search(r"^import triton\b", text, re.M):
        return None
    edits: list[tuple[int, int, str]] = []
    for name, (sopen, sclose) in jit_kernels(text).items():
        params = text[sopen + 1:sclose]
        if "=" in params or "*" in params:
            continue
        span = _body(text, sclose)
        if span is None:
            continue
        body = text[span[0]:span[1]]
        lines = body.split("\n")
        first = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.strip().startswith("#")), None)
        m = _PID.match(lines[first]) if first is not None else None
        rest = "\n".join(lines[first + 1:]) if m else ""
        if m is None or re.search(r"\breturn\b|tl\.program_id|tl\.num_programs", rest):
            continue
        sites = launches(text, name)
        grids = [re.fullmatch(r"\(\s*(.+?)\s*,\s*\)", text[g0 + 1:g1], re.S) for g0, g1, _, _ in sites]
        if not sites or any(g is None for g in grids):
            continue
        ind, var = m.group("indent"), m.group("var")
        new_lines = lines[:first] + [
            f"{ind}for kstrata_r in tl.static_range(ROWS_PER_PROG):",
            f"{ind}    {var} = ({m.group('expr')}) * ROWS_PER_PROG + kstrata_r",
            f"{ind}    if {var} < kstrata_n_rows:",
        ] + [("        " + ln if ln.strip() else ln) for ln in lines[first + 1:]]
        edits.append((span[0], span[1], "\n".join(new_lines)))
        edits.append(_insert_kwargs(text, sclose, "kstrata_n_rows, ROWS_PER_PROG: tl.constexpr"))
        for (g0, g1, _, aclose), g in zip(sites, grids):
            expr = g.group(1)
            edits.append((g0 + 1, g1, f"(triton.cdiv({expr}, ROWS_PER_PROG),)"))
            edits.append(_insert_kwargs(text, aclose, f"kstrata_n_rows={expr}, ROWS_PER_PROG=ROWS_PER_PROG"))
    if not edits:
        return None
    choices = ", ".join(map(str, sorted({*ROWS_CHOICES, rows})))
    const = _constant_line(text, f"ROWS_PER_PROG = {rows}  # kstrata-tune: {{{choices}}}")
    return _apply(text, edits + [const]) if const else None


def launch_config(text: str, warps: int) -> str | None:
    """``text`` with a marked ``NUM_WARPS = warps`` passed as ``num_warps`` at
    every launch, or ``None`` where the file sets ``num_warps`` already, uses
    ``triton.autotune``, or has no launch."""
    if re.search(r"\bnum_warps\b|\bNUM_WARPS\b|triton\.autotune", text):
        return None
    edits = [_insert_kwargs(text, aclose, "num_warps=NUM_WARPS")
             for k in jit_kernels(text) for _, _, _, aclose in launches(text, k)]
    choices = ", ".join(map(str, NAMED_CHOICES[0][1]))
    const = _constant_line(text, f"NUM_WARPS = {warps}  # kstrata-tune: {{{choices}}}")
    return _apply(text, edits + [const]) if edits and const else None


#: Triton's matmul tutorial autotune configurations (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps,
#: num_stages), from ``python/tutorials/03-matrix-multiplication.py`` (``get_cuda_autotune_config``)
GEMM_CONFIGS = (
    (128, 256, 64, 8, 8, 3), (64, 256, 32, 8, 4, 4), (128, 128, 32, 8, 4, 4), (128, 64, 32, 8, 4, 4),
    (64, 128, 32, 8, 4, 4), (128, 32, 32, 8, 4, 4), (64, 32, 32, 8, 2, 5), (32, 64, 32, 8, 2, 5),
)
GEMM_NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "NUM_WARPS", "NUM_STAGES")
#: shared memory one program may use (bytes): 227 KiB, the per-block maximum of compute capability
#: 9.0 (H100/H200; CUDA C++ Programming Guide, "Technical Specifications per Compute Capability").
#: A GEMM configuration over it fails to launch (Triton's OutOfResources: the tutorial's
#: 128 x 256 x 64, 3-stage config needs 288 KiB in fp32)
SHARED_MEMORY_BYTES = 227 * 1024


def gemm_shared_bytes(config: dict[str, int], element_bytes: int) -> int | None:
    """Shared memory (bytes) a GEMM-like configuration's pipelined A and B tiles take:
    ``NUM_STAGES * (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * element_bytes`` (Triton keeps one
    buffer per stage); ``None`` for a configuration without those tunables."""
    try:
        m, n, k = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    except KeyError:
        return None
    return max(1, config.get("NUM_STAGES", 1)) * (m * k + k * n) * element_bytes
#: configurations on the diagonal sweep of a non-GEMM kernel
SWEEP_POINTS = 6


def _with_values(text: str, values: dict[str, int]) -> str:
    """``text`` with the marked/module tunables in ``values`` set (others kept)."""
    edits = [(start, end, str(values[t.name])) for t in find_tunables(text)
             if t.name in values and t.origin != "launch" for start, end in ((t.start, t.end), *t.also)]
    return _apply(text, edits)


def sweep_variants(text: str) -> list[Variant]:
    """Autotune-style configurations of ``text`` (see the module docstring):
    every config whose values are among the tunables' declared choices, the
    current setting left out, a conditional tunable kept where its condition
    is off. Launch-site literals are not swept (one-parameter moves cover them)."""
    tunables = [t for t in find_tunables(text) if t.origin != "launch"]
    by_name = {t.name: t for t in tunables}
    configs: list[dict[str, int]] = []
    if set(GEMM_NAMES) <= set(by_name):
        configs = [dict(zip(GEMM_NAMES, c)) for c in GEMM_CONFIGS
                   if all(v in by_name[n].choices for n, v in zip(GEMM_NAMES, c))]
    elif tunables:
        for i in range(SWEEP_POINTS):
            configs.append({t.name: t.choices[round(i * (len(t.choices) - 1) / (SWEEP_POINTS - 1))]
                            for t in tunables})
    out, seen = [], {text}
    for config in configs:
        for t in tunables:  # a tunable that nothing reads under this config keeps its value
            if t.condition is not None and not config.get(t.condition, 1):
                config[t.name] = t.value
        new = _with_values(text, config)
        if new in seen:
            continue
        seen.add(new)
        changed = {k: v for k, v in config.items() if by_name[k].value != v}
        out.append(Variant(new, "sweep", "sweep: " + ", ".join(f"{k}={v}" for k, v in changed.items()), changed))
    return out


def structural_variants(text: str) -> list[Variant]:
    """The mechanical structural variants of ``text`` that apply."""
    out = []
    for rows in (2, 4):
        new = rows_per_program(text, rows)
        if new is not None:
            out.append(Variant(new, "rows-per-program",
                               f"{rows} rows per program (a loop over rows in each program, grid / {rows})",
                               {"ROWS_PER_PROG": rows}))
    for warps in INSERTED_WARPS:
        new = launch_config(text, warps)
        if new is not None:
            out.append(Variant(new, "launch-config", f"num_warps={warps} at every launch", {"num_warps": warps}))
    return out


def variants(text: str, rng: random.Random | None = None, limit: int | None = None,
             exclude: frozenset[str] | set[str] = frozenset(),
             shape: tuple[int, int] | None = None, element_bytes: int | None = None) -> list[Variant]:
    """Structural variants first, then the sweep's configurations, then
    one-parameter moves by distance (each distance shuffled by ``rng``, then
    interleaved across tunables so the first few cover different parameters);
    distinct texts not in ``exclude`` (e.g. the run's candidates) only, at
    most ``limit``. With ``shape`` = ``(rows, row_len)`` (the first input
    folded to 2-D at the timing shape) they are ranked by :func:`rank_for_shape`
    before the cut. With ``element_bytes`` (the task's element size), a GEMM-like
    variant whose tiles need more than :data:`SHARED_MEMORY_BYTES`
    (:func:`gemm_shared_bytes`) is left out: it could not launch."""
    rng = rng or random.Random(0)
    ordered = structural_variants(text) + sweep_variants(text)
    for moves in parameter_variants(text):
        rng.shuffle(moves)
        by_name: dict[str, list[Variant]] = {}
        for v in moves:
            by_name.setdefault(next(iter(v.params)), []).append(v)
        while any(by_name.values()):
            for name in list(by_name):
                if by_name[name]:
                    ordered.append(by_name[name].pop(0))
    seen, out = {text, *exclude}, []
    for v in ordered:
        if v.text not in seen:
            seen.add(v.text)
            need = gemm_shared_bytes(_config(v), element_bytes) if element_bytes else None
            if need is None or need <= SHARED_MEMORY_BYTES:
                out.append(v)
    if shape is not None:
        out = rank_for_shape(out, *shape)
    return out[:limit] if limit is not None else out


#: fp32 elements per thread per program that a row or elementwise kernel is ranked towards: 16 keeps
#: a block in registers at 4-16 warps with room for the reduction temporaries (Triton's softmax and
#: layer-norm tutorials size BLOCK / (32 * num_warps) to 8-32); above 64 the compiler spills
ELEMENTS_PER_THREAD = 16
#: programs a launch should have at least to fill a GPU (4 per SM on a 132-SM H100/H200)
MIN_PROGRAMS = 512


def _config(v: Variant) -> dict[str, int]:
    """Every tunable's value in the variant's text, structural parameters included."""
    config = {t.name: t.value for t in find_tunables(v.text)}
    config.update({k: int(x) for k, x in v.params.items() if isinstance(x, int)})
    return config


def shape_cost(config: dict[str, int], rows: int, row_len: int) -> float:
    """A model-free cost of one configuration at one problem size (lower is better).

    ``rows`` x ``row_len`` is the first input's shape folded to 2-D (rows = the
    leading dimensions' product, ``row_len`` = the last dimension). The cost is
    the distance, in powers of two, of the elements each thread holds per
    program from :data:`ELEMENTS_PER_THREAD` (spills above 64), plus the
    shortfall of programs below :data:`MIN_PROGRAMS`, plus one for a two-pass
    split where the whole row fits a program in one pass (the split adds a
    loop and, for normalizations, a second read). A 1-D ``BLOCK`` kernel
    (elementwise) counts ``rows * row_len`` elements in blocks of ``BLOCK``.
    It orders proposals only; every variant is still verified and timed.
    """
    warps = config.get("NUM_WARPS", config.get("num_warps", 4)) or 4
    threads = 32 * warps
    p2 = 1 << max(0, (max(1, row_len) - 1).bit_length())
    if "BLOCK" in config and "TWO_PASS" not in config:
        span, programs = config["BLOCK"], math.ceil(rows * row_len / max(1, config["BLOCK"]))
        extra = 0.0
    else:
        per_prog = max(1, config.get("ROWS_PER_PROG", 1))
        two_pass = bool(config.get("TWO_PASS", 0))
        span = (min(config.get("CHUNK", p2), p2) if two_pass else p2) * per_prog
        programs = math.ceil(rows / per_prog)
        # the row fits one pass at the most warps a launch takes with at most twice the target per thread
        extra = 1.0 if two_pass and p2 <= 2 * ELEMENTS_PER_THREAD * 32 * max(NAMED_CHOICES[0][1]) else 0.0
    per_thread = span / threads
    cost = abs(math.log2(per_thread / ELEMENTS_PER_THREAD)) + extra
    if per_thread > 64:
        cost += math.log2(per_thread / 64)
    if programs < MIN_PROGRAMS:
        cost += math.log2(MIN_PROGRAMS / max(1, programs))
    return cost


def rank_for_shape(found: list[Variant], rows: int, row_len: int) -> list[Variant]:
    """``found`` reordered by :func:`shape_cost` at ``rows`` x ``row_len``,
    stable (equal costs keep the structural-sweep-moves order of
    :func:`variants`), so the first evaluations go to the configurations that
    fit the problem: several rows per program for short rows, a two-pass
    split or more warps for long ones."""
    return sorted(found, key=lambda v: shape_cost(_config(v), rows, row_len))
