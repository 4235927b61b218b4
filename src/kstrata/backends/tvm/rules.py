"""Rules of the built-in (non-LLM) proposer for TVM candidates.

Each rule looks at a lowered PrimFunc (after the candidate's current schedule)
and returns schedule *variants*: new ``schedule`` texts (the current text plus
appended statements), so a variant is stored, shown and edited like any other
schedule. :func:`schedule_variants` runs every rule over every PrimFunc;
:func:`graph_variants` gives the graph-level alternatives (fusion on/off).

Rules (Halide/TVM's classic CPU/GPU recipes, cf. Ragan-Kelley et al. 2013 and
TVM's MetaSchedule ``MultiLevelTiling``/``ParallelizeVectorizeUnroll`` rules):

``parallel_vectorize``   fuse outer spatial loops + ``parallel``; ``vectorize`` the innermost
``tile``                 multi-level tiling of the two innermost spatial loops (+ reorder)
``reorder``              swap the two innermost loops of a block
``unroll``               ``unroll`` the innermost reduction loop (split by a factor)
``cache_write``          a local write cache computed under the outer tile
``inline``               ``compute_inline`` elementwise producers / ``reverse_compute_inline`` consumers
``fuse_rows``            composite: inline producers, parallel rows, reductions computed per row (+ vectorize)
``gemm_tile``            composite: the classic CPU GEMM blocking (tile, k split, vectorize, parallel) + epilogue per tile
``reduce_vec``           composite: a vectorized reduction (rfactor over the contiguous axis, or spatial lanes)
``conv_tile``            composite: register-blocked direct convolution (channels x pixels, reduction outside)

GPU targets get none of these: :mod:`kstrata.backends.tvm.gpu_rules` writes
whole thread-bound schedules there.

When several PrimFuncs have recipes, :func:`schedule_variants` also proposes the
k-th recipe of every PrimFunc in one candidate (rule ``a+b``, func ``*``) first.

:data:`COMPOSITE` rules are whole schedules for a PrimFunc; the built-in
proposer tries them before the single-step rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kstrata.backends.tvm.lower import FUSION_CHOICES, parse_graph, with_build, with_fusion
from kstrata.backends.tvm.schedule import render_schedule, replay_schedule, schedule_lines


@dataclass(frozen=True)
class Variant:
    """One proposed change: the new text of ``level`` and what the rule did."""

    level: str
    text: str
    rule: str
    func: str
    description: str


def _blocks(sch: Any) -> list[tuple[str, Any, list[Any], str]]:
    """(block name, block rv, loop rvs, iter kinds like "SSR") for every leaf block."""
    out = []
    root = sch.get_sblock("root", func_name="main") if _has_root(sch) else None
    blocks = sch.get_child_blocks(root) if root is not None else []
    for b in blocks:
        name = sch.get(b).name_hint
        loops = sch.get_loops(b)
        out.append((name, b, loops, _kinds_of(sch, b)))
    return out


def _has_root(sch: Any) -> bool:
    try:
        sch.get_sblock("root", func_name="main")
        return True
    except Exception:  # noqa: BLE001
        return False


def _extent(sch: Any, loop: Any) -> int:
    try:
        return int(sch.get(loop).extent)
    except (TypeError, ValueError):
        return 0


def _sblock(name: str) -> str:
    """Schedule-text expression for block ``name`` of the PrimFunc being scheduled."""
    return f'sch.get_sblock("{name}", func_name="main")'


def _get_block(name: str) -> str:
    return f"b = {_sblock(name)}"


# each rule: (sch, block name, loops, kinds, gpu) -> list of (rule-specific statements, description)
Rule = Callable[[Any, str, list[Any], str, bool], list[tuple[list[str], str]]]


def rule_parallel_vectorize(sch: Any, name: str, loops: list[Any], kinds: str, gpu: bool):
    if gpu or not loops:
        return []
    n_sp = len(loops) - len(kinds.lstrip("S")) if kinds else len(loops)
    out = []
    inner = _extent(sch, loops[-1])
    lines = [_get_block(name), "loops = sch.get_loops(b)"]
    if n_sp >= 2 or (n_sp >= 1 and len(loops) > 1):
        k = max(1, min(n_sp, len(loops) - 1))
        lines += [f"outer = sch.fuse(*loops[:{k}])" if k > 1 else "outer = loops[0]",
                  "sch.parallel(outer)"]
    if kinds.endswith("S") and inner > 1:
        for vec in (4, 8, 16):
            if inner % vec == 0 and inner > vec:
                out.append((lines + ["loops = sch.get_loops(b)", *_vectorized("loops[-1]", vec)],
                            f"parallel outer loops of {name}, vectorize inner by {vec}"))
    if len(lines) > 2:
        out.append((lines, f"parallel outer spatial loops of {name}"))
    return out


def rule_tile(sch: Any, name: str, loops: list[Any], kinds: str, gpu: bool):
    sp = [i for i, k in enumerate(kinds) if k == "S"]
    if gpu or len(sp) < 2 or len(loops) != len(kinds):
        return []
    i, j = sp[-2], sp[-1]
    out = []
    for ti, tj in ((32, 32), (8, 64), (16, 16)):
        if _extent(sch, loops[i]) <= ti or _extent(sch, loops[j]) <= tj:
            continue
        lines = [_get_block(name), "loops = sch.get_loops(b)",
                 f"io, ii = sch.split(loops[{i}], factors=[None, {ti}])",
                 f"jo, ji = sch.split(loops[{j}], factors=[None, {tj}])"]
        red = ", ".join(f"loops[{k}]" for k, c in enumerate(kinds) if c == "R")
        lines += [f"sch.reorder(io, jo, {red + ', ' if red else ''}ii, ji)"]
        out.append((lines, f"tile {name} {ti}x{tj}"))
    return out


def rule_reorder(sch: Any, name: str, loops: list[Any], kinds: str, gpu: bool):
    if gpu or len(loops) < 2:
        return []
    return [([_get_block(name), "loops = sch.get_loops(b)", "sch.reorder(loops[-1], loops[-2])"],
             f"swap the two innermost loops of {name}")]


def rule_unroll(sch: Any, name: str, loops: list[Any], kinds: str, gpu: bool):
    if not kinds.endswith("R") or not loops or _extent(sch, loops[-1]) < 8:
        return []
    return [([_get_block(name), "loops = sch.get_loops(b)",
              "_, ui = sch.split(loops[-1], factors=[None, 4])", "sch.unroll(ui)"],
             f"unroll the innermost reduction loop of {name} by 4")]


def rule_cache_write(sch: Any, name: str, loops: list[Any], kinds: str, gpu: bool):
    if gpu or "R" not in kinds or kinds.count("S") < 1 or len(loops) != len(kinds):
        return []
    return [([_get_block(name), 'cw = sch.cache_write(b, 0, "local")',
              "loops = sch.get_loops(b)", "sch.reverse_compute_at(cw, loops[0])"],
             f"accumulate {name} in a local write cache per outer iteration")]


def rule_inline(sch: Any, name: str, loops: list[Any], kinds: str, gpu: bool):
    out = []
    if "R" not in kinds:
        out.append(([_get_block(name), "sch.compute_inline(b)"], f"inline elementwise producer {name}"))
        out.append(([_get_block(name), "sch.reverse_compute_inline(b)"], f"inline consumer {name} into its producer"))
    return out


def _try_lines(sch: Any, lines: list[str]) -> Any | None:
    """``sch`` copied with ``lines`` applied, or None when a line fails."""
    from kstrata.backends.tvm.schedule import _namespace

    trial = sch.copy()
    ns = _namespace(trial)
    try:
        for line in lines:
            exec(line, ns)  # noqa: S102 - our own generated schedule statements
    except Exception:  # noqa: BLE001 - the step does not apply here
        return None
    return trial


def _kinds_of(sch: Any, block: Any) -> str:
    return "".join("R" if iv.iter_type == 2 else "S" for iv in sch.get(block).iter_vars)


def rule_fuse_rows(sch: Any, name: str, loops: list[Any], kinds: str, gpu: bool):
    """Composite CPU schedule of a multi-block PrimFunc (softmax, norms, fused
    elementwise chains), applied from its last block: inline every elementwise
    producer, parallelize the output block's outer spatial loops, compute every
    remaining (reduction) producer per outer iteration under that loop, and
    optionally vectorize the output's innermost spatial loop. This is the
    hand schedule of a row-wise kernel (one pass per row, rows across threads;
    Ragan-Kelley et al. 2013's compute-at/parallel split) that MetaSchedule's
    random compute locations find only by chance in a few trials."""
    if gpu:
        return []
    blocks = _blocks(sch)
    if len(blocks) < 2 or blocks[-1][0] != name:
        return []
    lines: list[str] = []
    cur = sch
    for bname, _, _, bkinds in reversed(blocks[:-1]):
        if "R" in bkinds:
            continue
        step = [f"sch.compute_inline({_sblock(bname)})"]
        nxt = _try_lines(cur, step)
        if nxt is not None:
            cur, lines = nxt, lines + step
    out_block = cur.get_sblock(name, func_name="main")
    out_loops = cur.get_loops(out_block)
    out_kinds = _kinds_of(cur, out_block)
    n_sp = len(out_kinds) - len(out_kinds.lstrip("S"))
    if len(out_loops) != len(out_kinds) or n_sp < 1:
        return []
    k = n_sp - 1 if n_sp >= 2 else 1  # keep the innermost spatial loop for vectorizing
    head = [_get_block(name), "loops = sch.get_loops(b)",
            f"outer = sch.fuse(*loops[:{k}])" if k > 1 else "outer = loops[0]"]
    producers = [bn for bn, _, _, bk in reversed(blocks[:-1]) if "R" in bk]
    compute_at = [f"sch.compute_at({_sblock(p)}, outer)" for p in producers]
    base = lines + head + compute_at + ["sch.parallel(outer)"]
    if _try_lines(sch, base) is None:
        base = lines + head + ["sch.parallel(outer)"]
        if _try_lines(sch, base) is None:
            return []
    out = [(base, f"row-wise {name}: inline elementwise producers, parallel outer loop, "
                  f"{len(producers)} reduction producer(s) computed per row")]
    if out_kinds.endswith("S") and len(out_loops) > k:
        for vec in (8, 16):
            vl = base + ["loops = sch.get_loops(b)", *_vectorized("loops[-1]", vec)]
            if _try_lines(sch, vl) is None:
                continue
            out.append((vl, (f"row-wise {name} (as above) + vectorize the inner loop by {vec} where the lanes "
                             "divide it (else LLVM's vectorizer)")))
            # the row's reductions vectorized too: partial results per lane (rfactor), folded per row
            rf = list(vl)
            for p in producers:
                step = [f"pl = sch.get_loops({_sblock(p)})",
                        f"if {_divides('pl[-1]', vec)}:\n"
                        f"    _, ri = sch.split(pl[-1], factors=[None, {vec}])\n"
                        f"    sch.vectorize(sch.get_loops(sch.rfactor(ri, 0))[-1])"]
                if _try_lines(sch, rf + step) is not None:
                    rf += step
            if len(rf) > len(vl):
                out.append((rf, (f"row-wise {name} (as above, by {vec}) + reductions vectorized by rfactor "
                                 "where the lanes divide them")))
    # most complete first (the proposer takes the first few): rfactor, then wider vectors
    return sorted(out, key=lambda v: ("rfactor" not in v[1], "by 16" not in v[1], len(v[0]) == len(base)))


def rule_gemm_tile(sch: Any, name: str, loops: list[Any], kinds: str, gpu: bool):
    """The classic CPU GEMM schedule for a ``[batch...] i j k`` block (TVM's
    "How to optimize GEMM on CPU" tutorial: blocking for cache, k split,
    loop order ``io jo ko ki ii ji``, vectorized ``ji``, parallel outer
    tiles), in three tile sizes."""
    if gpu or not kinds.endswith("SSR") or len(loops) != len(kinds) or kinds.count("R") != 1:
        return []
    block = sch.get_sblock(name, func_name="main")
    if len(sch.get(block).reads) < 2 or min(_extent(sch, lp) for lp in loops[-3:-1]) < 8:
        return []  # a plain reduction (one operand) or a degenerate i/j: not a GEMM
    nb = len(kinds) - 3
    out = []
    for ti, tj, tk in ((32, 32, 4), (16, 64, 4), (8, 128, 8)):
        lines = [_get_block(name), "loops = sch.get_loops(b)",
                 f"io, ii = sch.split(loops[{nb}], factors=[None, {ti}])",
                 f"jo, ji = sch.split(loops[{nb + 1}], factors=[None, {tj}])",
                 f"ko, ki = sch.split(loops[{nb + 2}], factors=[None, {tk}])",
                 f"sch.reorder({''.join(f'loops[{i}], ' for i in range(nb))}io, jo, ko, ki, ii, ji)",
                 "sch.vectorize(ji)",
                 f"sch.parallel(sch.fuse({''.join(f'loops[{i}], ' for i in range(nb))}io))" if nb else
                 "sch.parallel(io)"]
        lines = _with_consumers_at(sch, name, "jo", lines)
        out.append((lines, f"GEMM tiling of {name}: {ti}x{tj} tiles, k by {tk}, vectorize j, parallel outer"
                           " (+ its elementwise epilogue per tile)"))
    return out


def _region_name(region: Any) -> str:
    """The buffer name of a block's read/write region (TVM 0.27 calls the
    buffer ``source``; older releases ``buffer``)."""
    buf = getattr(region, "source", None)
    if buf is None:
        buf = getattr(region, "buffer", None)
    return str(getattr(buf, "name", buf))


def _with_consumers_at(sch: Any, name: str, at: str, lines: list[str], vectorize: bool = True) -> list[str]:
    """``lines`` plus the epilogue of block ``name`` moved under loop ``at``:
    the elementwise blocks that follow it (a mean's divide, a GEMM's casts,
    bias and activation) are inlined into the last of them where that replays
    (so the chain is one pass, not one pass per op), the rest are computed under
    ``at`` (``reverse_compute_at``, per row or per tile while the data is in
    cache) and their innermost loop vectorized where that replays."""
    blocks = _blocks(sch)
    names = [b[0] for b in blocks]
    if name not in names:
        return lines
    epilogue = []
    for bname, _, _, bkinds in blocks[names.index(name) + 1:]:
        if "R" in bkinds:
            break
        epilogue.append(bname)
    inlined = set()
    for bname in epilogue[:-1]:
        step = [f"sch.compute_inline({_sblock(bname)})"]
        if _try_lines(sch, lines + step) is not None:
            lines = lines + step
            inlined.add(bname)
    for bname in epilogue:
        if bname in inlined:
            continue
        steps = [[f"sch.reverse_compute_at({_sblock(bname)}, {at})"]]
        if vectorize:
            steps.insert(0, steps[0] + [f"sch.vectorize(sch.get_loops({_sblock(bname)})[-1])"])
        for step in steps:
            if _try_lines(sch, lines + step) is not None:
                lines = lines + step
                break
    return lines


def _divides(loop: str, lanes: int) -> str:
    """Schedule-text condition: ``loop``'s extent is a constant multiple of
    ``lanes`` (false for a symbolic extent)."""
    return (f"isinstance(sch.get({loop}).extent, tvm.tirx.IntImm) "
            f"and int(sch.get({loop}).extent) % {lanes} == 0")


def _vectorized(loop: str, lanes: int) -> list[str]:
    """Schedule text: split ``loop`` by ``lanes`` and vectorize the lanes where
    they divide its constant extent, else leave the loop whole.

    TVM vectorizes a split with a tail (``T.where``) by scalarizing it: each
    lane's load and store is guarded on its own and no vector instruction is
    left (rmsnorm's row scale at a symbolic D: 16 ``vmulss`` with 16 compares).
    LLVM's loop vectorizer turns the whole loop into a vector body and a scalar
    tail, so a symbolic extent (every default ``tvm-llvm`` build) or one the
    lanes do not divide keeps the plain loop for it."""
    return [(f"if {_divides(loop, lanes)}:\n"
             f"    _, vi = sch.split({loop}, factors=[None, {lanes}])\n"
             f"    sch.vectorize(vi)")]


def _elementwise_producers_inlined(sch: Any, name: str) -> list[str]:
    """Schedule text inlining the elementwise blocks before block ``name`` that
    feed nothing but ``name`` (directly or through each other), where that
    replays: rmsnorm's ``x ** 2`` under ``fusion: rows`` is otherwise a serial
    pass of its own that writes and re-reads a B x D buffer before the parallel
    reduction. A producer with other consumers (softmax's ``exp``, read by the
    sum and the output) stays, so nothing is computed twice."""
    blocks = _blocks(sch)
    names = [b[0] for b in blocks]
    lines: list[str] = []
    cur = sch
    feeds = {name}
    for bname, brv, _, bkinds in reversed(blocks[:names.index(name)] if name in names else []):
        consumers = {sch.get(c).name_hint for c in sch.get_consumers(brv)}
        if "R" in bkinds or not consumers or not consumers <= feeds:
            continue
        step = [f"sch.compute_inline({_sblock(bname)})"]
        nxt = _try_lines(cur, step)
        if nxt is not None:
            cur, lines, feeds = nxt, lines + step, feeds | {bname}
    return lines


def _reduces_contiguous(sch: Any, block: Any) -> bool | None:
    """Whether the reduction block's input is indexed by a reduction variable in
    its last (contiguous) dimension; None when that cannot be read."""
    import re

    try:
        blk = sch.get(block)
        rvars = [str(iv.var) for iv in blk.iter_vars if iv.iter_type == 2]
        outs = {_region_name(w) for w in blk.writes}
        for r in blk.reads:
            if _region_name(r) not in outs:
                last = str(r.region[-1].min)
                return any(re.search(rf"\b{re.escape(v)}\b", last) for v in rvars)
    except Exception:  # noqa: BLE001 - an IR shape this reader does not know
        return None
    return None


def rule_reduce_vec(sch: Any, name: str, loops: list[Any], kinds: str, gpu: bool):
    """Composite CPU schedule of a plain reduction block (sum/max/mean over some
    axes: one input buffer, spatial loops then reduction loops), in the two
    shapes a vectorizing compiler needs (cf. TVM's ``rfactor`` tutorial and
    MetaSchedule's ``AddRFactor``/``ParallelizeVectorizeUnroll`` rules):

    * reduction over the contiguous axis: split the reduction loop by the vector
      width, ``rfactor`` the inner part (partial results per lane), vectorize
      the lanes, parallelize the outer spatial loops and fold the lanes per row;
    * reduction over a strided axis (the innermost spatial loop is the
      contiguous one): split the innermost spatial loop by the vector width,
      move the reduction loops inside the outer part, vectorize the spatial
      lanes and parallelize the outer spatial loops.

    Elementwise producers that feed only this block are inlined into it
    (:func:`_elementwise_producers_inlined`); elementwise consumers (a mean's
    divide) are computed under the same parallel loop. Variants that do not
    replay on this block are dropped."""
    if gpu or "R" not in kinds or len(loops) != len(kinds):
        return []
    n_sp = len(kinds) - len(kinds.lstrip("S"))
    if n_sp < 1 or "S" in kinds[n_sp:]:
        return []  # spatial loops must all come first
    block = sch.get_sblock(name, func_name="main")
    if len({_region_name(r) for r in sch.get(block).reads}
           - {_region_name(w) for w in sch.get(block).writes}) != 1:
        return []  # a GEMM or a multi-input reduction: gemm_tile / other rules
    contiguous = _reduces_contiguous(sch, block)
    head = _elementwise_producers_inlined(sch, name) + [_get_block(name), "loops = sch.get_loops(b)"]
    rl = ", ".join(f"loops[{i}]" for i in range(n_sp, len(kinds)))
    r_one = f"sch.fuse({rl})" if len(kinds) - n_sp > 1 else f"loops[{n_sp}]"
    out = []
    for vec in (16, 8):
        outer = (f"outer = sch.fuse(*rfl[:{n_sp}])" if n_sp > 1 else "outer = rfl[0]")
        # rfactor only where the lanes divide the reduction: TVM 0.27's rfactor of a
        # split with a tail predicate gave wrong results (softmax at D=77, max at D=2)
        lines = head + [f"r = {r_one}",
                        f"if {_divides('r', vec)}:\n"
                        f"    ro, ri = sch.split(r, factors=[None, {vec}])\n"
                        f"    rfl = sch.get_loops(sch.rfactor(ri, 0))\n"
                        f"    sch.vectorize(rfl[-1])\n"
                        f"    {outer}\n"
                        f"    sch.reverse_compute_at(b, outer)\n"
                        f"else:\n"
                        f"    rfl = sch.get_loops(b)\n"
                        f"    {outer}",
                        "sch.parallel(outer)"]
        # (a vectorized consumer next to the rfactor buffer fails TVM's storage rewrite)
        lines = _with_consumers_at(sch, name, "outer", lines, vectorize=False)
        if contiguous is not False and _try_lines(sch, lines) is not None:
            out.append((lines, f"reduction {name} over the contiguous axis: rfactor by {vec} lanes, "
                               "vectorized, parallel rows"))
        if contiguous is not True and _extent(sch, loops[n_sp - 1]) >= vec:
            pre = ", ".join(f"loops[{i}]" for i in range(n_sp - 1))
            lines = head + [f"so, si = sch.split(loops[{n_sp - 1}], factors=[None, {vec}])",
                            f"sch.reorder({pre + ', ' if pre else ''}so, {rl}, si)",
                            f"outer = sch.fuse({pre + ', ' if pre else ''}so)" if pre else "outer = so",
                            "sch.parallel(outer)", "sch.vectorize(si)"]
            lines = _with_consumers_at(sch, name, "outer", lines)
            if _try_lines(sch, lines) is not None:
                out.append((lines, f"reduction {name} over a strided axis: reduction loops inside, "
                                   f"{vec} spatial lanes vectorized, parallel outer"))
    return out


def rule_conv_tile(sch: Any, name: str, loops: list[Any], kinds: str, gpu: bool):
    """Register-blocked CPU schedule of a convolution-like block (``S``×a then
    ``R``×b with a >= 3, b >= 2 and two inputs, e.g. NCHW ``conv2d``: n, co, y,
    x, ci, ky, kx): a small output block (channels × row pixels) accumulates in
    a local cache while the reduction loops run outside it; the pixel lanes are
    vectorized, the channel loop unrolled, the outer spatial loops parallel,
    elementwise producers (padding) inlined and consumers (bias, ReLU) computed
    per block. This is the direct-convolution recipe of TVM's x86 ``conv2d``
    schedules and of Zhang et al., "High Performance Zero-Memory Overhead
    Direct Convolutions" (ICML 2018), on the NCHW layout."""
    if gpu or len(loops) != len(kinds):
        return []
    a = len(kinds) - len(kinds.lstrip("S"))
    if a < 3 or len(kinds) - a < 2 or "S" in kinds[a:]:
        return []
    block = sch.get_sblock(name, func_name="main")
    if len(sch.get(block).reads) < 2:
        return []
    blocks = _blocks(sch)
    names = [bl[0] for bl in blocks]
    inline = [f"sch.compute_inline({_sblock(bn)})"
              for bn, _, _, bk in blocks[:names.index(name)] if "R" not in bk]
    inner = _extent(sch, loops[a - 1])
    if inner < 2:
        return []
    out = []
    mid = ", ".join(f"loops[{i}]" for i in range(2, a - 1))
    red = ", ".join(f"loops[{i}]" for i in range(a, len(kinds)))
    for tc in (4, 8):
        if _extent(sch, loops[1]) < tc:
            continue
        tx = inner if inner <= 16 else 16 if inner % 16 == 0 else 8
        lines = [_get_block(name), "loops = sch.get_loops(b)",
                 f"co, ci = sch.split(loops[1], factors=[None, {tc}])",
                 f"xo, xi = sch.split(loops[{a - 1}], factors=[None, {tx}])",
                 f"sch.reorder(loops[0], co, {mid + ', ' if mid else ''}xo, {red}, ci, xi)",
                 f"outer = sch.fuse(loops[0], co{', ' + mid if mid else ''})",
                 "sch.parallel(outer)", "sch.unroll(ci)", "sch.vectorize(xi)",
                 'cw = sch.cache_write(b, 0, "local")', "sch.reverse_compute_at(cw, xo)"]
        if _try_lines(sch, lines) is None:
            continue
        with_inl = lines + inline if inline and _try_lines(sch, lines + inline) is not None else lines
        full = _with_consumers_at(sch, name, "outer", with_inl)
        out.append((full, f"direct convolution {name}: {tc} channels x {tx} pixels register block, "
                          "reduction outside it, vectorized pixels, parallel outer"))
    return out


RULES: dict[str, Rule] = {
    "fuse_rows": rule_fuse_rows,
    "gemm_tile": rule_gemm_tile,
    "reduce_vec": rule_reduce_vec,
    "conv_tile": rule_conv_tile,
    "parallel_vectorize": rule_parallel_vectorize,
    "tile": rule_tile,
    "reorder": rule_reorder,
    "unroll": rule_unroll,
    "cache_write": rule_cache_write,
    "inline": rule_inline,
}


#: Rules that write a whole schedule for a PrimFunc (tried first, in order),
#: the GPU recipes of :mod:`kstrata.backends.tvm.gpu_rules` among them.
COMPOSITE = ("fuse_rows", "gemm_tile", "reduce_vec", "conv_tile", "gpu_gemm", "gpu_online", "gpu_rows", "gpu_reduce",
             "gpu_elementwise", "dlight")


def schedule_variants(
    funcs: dict[str, Any], schedule_text: str, gpu: bool = False, rules: list[str] | None = None,
    check: bool = True, target: str | None = None,
) -> list[Variant]:
    """Schedule variants of a candidate, one rule application each (on a GPU
    target: :func:`kstrata.backends.tvm.gpu_rules.gpu_variants`, whole
    thread-bound schedules; none of the CPU rules here).

    Parameters
    ----------
    funcs:
        The candidate's lowered (unscheduled) PrimFuncs at the build shape.
    schedule_text:
        The candidate's current schedule; variants append to it.
    gpu:
        Target needs thread binding: the GPU recipes instead of these rules.
    rules:
        Names from :data:`RULES` (default: all), or on a GPU target from
        :data:`kstrata.backends.tvm.gpu_rules.RECIPES`.
    check:
        Keep only variants whose statements all apply (replayed here; on a GPU
        target they are always built).
    target:
        With ``gpu``: the target kind (``cuda`` (default) or ``opencl``).
    """
    import tvm
    from tvm.s_tir import Schedule

    if gpu:  # whole thread-bound schedules per PrimFunc, checked by a build for the target
        from kstrata.backends.tvm import build as tb
        from kstrata.backends.tvm.gpu_rules import gpu_variants

        return gpu_variants(funcs, schedule_text, tb.make_target(target or "cuda"), rules)
    current, _, _ = replay_schedule(funcs, schedule_text)
    base = schedule_lines(schedule_text)

    def render(per_func: dict[str, list[str]]) -> str:
        per = {k: list(v) for k, v in base.items()}
        for fname, lines in per_func.items():
            per[fname] = per.get(fname, []) + lines
        return render_schedule(per)

    def replays(text: str) -> bool:
        return not check or not replay_schedule(funcs, text)[2]

    out: list[Variant] = []
    recipes: dict[str, list[tuple[str, list[str]]]] = {}  # func -> composite (rule, lines), in order
    for fname, func in current.items():
        sch = Schedule(tvm.IRModule({"main": func}))
        for bname, _, loops, kinds in _blocks(sch):
            for rname in rules or list(RULES):
                for lines, desc in RULES[rname](sch, bname, loops, kinds, gpu):
                    text = render({fname: lines})
                    if not replays(text):
                        continue
                    out.append(Variant("schedule", text, rname, fname, desc))
                    if rname in COMPOSITE:
                        recipes.setdefault(fname, []).append((rname, lines))
    if len(recipes) >= 2:
        # the k-th recipe of every PrimFunc at once: a multi-kernel task (a GEMM
        # and its dequantization, two GEMMs) gets a whole schedule in one candidate
        combined = []
        for k in range(max(len(v) for v in recipes.values())):
            pick = {f: v[min(k, len(v) - 1)] for f, v in recipes.items()}
            text = render({f: lines for f, (_, lines) in pick.items()})
            if replays(text) and all(text != c.text for c in combined):
                combined.append(Variant("schedule", text, "+".join(sorted({r for r, _ in pick.values()})),
                                        "*", f"recipes on all {len(pick)} PrimFuncs at once (choice {k + 1})"))
        out = combined + out
    return out


#: A Relax GEMM or convolution call in a graph's text.
_ANCHOR_CALL = r"\bR\.(?:matmul|nn\.(?:conv\w*|linear|dense))\("
#: A Relax reduction call in a graph's text and its first argument (``R.mean(lv,``).
_REDUCTION_CALL = r"\bR\.(?:sum|mean|max|min|prod|variance|std)\(\s*(\w+)"


def _reduces_a_computed_value(graph_text: str) -> bool:
    """Whether the graph (read as text only) reduces a value it computed, e.g.
    ``lv: R.Tensor(...) = R.power(x, ...)`` then ``R.mean(lv, ...)``: the
    elementwise producer that ``fusion: rows`` can fuse into the reduction. A
    reduction of an input (``R.mean(x, ...)``) or a graph without one lowers the
    same under ``rows``."""
    import re

    return any(re.search(rf"^\s*{re.escape(arg)}\s*:[^\n]*=", graph_text, re.MULTILINE)
               for arg in re.findall(_REDUCTION_CALL, graph_text))


def graph_variants(graph_text: str, gpu: bool = False) -> list[Variant]:
    """Graph-level alternatives: the build mode switched (``symbolic`` -> ``static``
    first: code specialized per shape, so loop extents are constants and split
    factors that divide them need no tail; a 256³ GEMM with the ``gemm_tile``
    recipe ran 0.14x of eager PyTorch symbolic and 0.9-1.0x static on 2 cores),
    then the other fusion choices (``FuseOps``+``FuseTIR`` on/off, and ``rows``
    on a GPU target (``gpu``) or where the graph reduces a value it computed
    (:func:`_reduces_a_computed_value`), :data:`~kstrata.backends.tvm.lower.FUSION_CHOICES`).
    The algebraic rewrites that apply (:func:`kstrata.backends.tvm.graph_rules.rewrites`,
    rule = the rewrite's name) come before all of them on a GPU target and after them on
    a CPU one (there ``rows`` is what rmsnorm needs first, and LLVM already turns
    ``pow(x, 2)`` into a multiply).

    On a CPU target ``rows`` comes first: rmsnorm's default ``ops+tir`` graph is
    two PrimFuncs, ``x ** 2`` alone in one that writes a B x D buffer the mean
    re-reads, and no schedule of either can fuse them; under ``rows`` it is one
    PrimFunc that ``fuse_rows`` makes a single parallel pass per row. Other
    graphs (a GEMM, an elementwise op, a mean of an input) lower the same under
    ``rows``, so it is not proposed there. Where ``rows`` is proposed and the
    graph has no GEMM or convolution (:data:`_ANCHOR_CALL`, whose epilogue a
    schedule may want apart), ``none`` is not: it only adds B x D intermediates
    to a row-wise graph (rmsnorm: 6 PrimFuncs), and as the slower graph change
    it took the search's lookahead, 9 of the quick start's 12 evaluations, with
    no schedule reaching eager (0.63-1.0x; ``benchmarks/results/cpu_rows.txt``)."""
    import re

    from kstrata.backends.tvm.graph_rules import rewrites

    header, _ = parse_graph(graph_text)
    rows = not gpu and _reduces_a_computed_value(graph_text)
    # the algebraic rewrites: first on a GPU target (they remove passes or work that no fusion choice does),
    # last on a CPU one (see above)
    rewritten = [Variant("graph", text, rule, "", desc) for rule, text, desc in rewrites(graph_text, gpu=gpu)]
    choices = FUSION_CHOICES if gpu else tuple(
        f for f in FUSION_CHOICES
        if (f != "rows" or rows) and (f != "none" or not rows or re.search(_ANCHOR_CALL, graph_text)))
    out = []
    if not gpu and "rows" in choices and header.fusion != "rows":
        out.append(Variant("graph", with_fusion(graph_text, "rows"), "fusion", "",
                           f"fusion: {header.fusion} -> rows (elementwise producers fused into the row "
                           "reductions they alone feed: one PrimFunc, one pass per row)"))
    if header.static_shape is None:
        other = "static" if header.build == "symbolic" else "symbolic"
        out.append(Variant("graph", with_build(graph_text, other), "build", "",
                           f"build: {header.build} -> {other}"
                           + (" (specialized per shape)" if other == "static" else " (one build, every shape)")))
    out += [
        Variant("graph", with_fusion(graph_text, f), "fusion", "", f"fusion: {header.fusion} -> {f}")
        for f in choices
        if f != header.fusion and (gpu or f != "rows")
    ]
    return rewritten + out if gpu else out + rewritten
