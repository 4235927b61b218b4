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
``gpu_bind``             fuse + split + bind to ``blockIdx.x``/``threadIdx.x`` (GPU targets)
``fuse_rows``            composite: inline producers, parallel rows, reductions computed per row (+ vectorize)
``gemm_tile``            composite: the classic CPU GEMM blocking (tile, k split, vectorize, parallel)

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
        kinds = "".join("R" if iv.iter_type == 2 else "S" for iv in sch.get(b).iter_vars)
        out.append((name, b, loops, kinds))
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


def _get_block(name: str) -> str:
    return f'b = sch.get_sblock("{name}", func_name="main")'


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
                out.append((lines + ["loops = sch.get_loops(b)",
                                     f"_, vi = sch.split(loops[-1], factors=[None, {vec}])",
                                     "sch.vectorize(vi)"],
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


def rule_gpu_bind(sch: Any, name: str, loops: list[Any], kinds: str, gpu: bool):
    if not gpu or not loops or "R" in kinds:
        return []
    return [([_get_block(name), "loops = sch.get_loops(b)", "f = sch.fuse(*loops)",
              f"bx, tx = sch.split(f, factors=[None, {t}])", 'sch.bind(bx, "blockIdx.x")',
              'sch.bind(tx, "threadIdx.x")'], f"bind {name} to {t} threads per block")
            for t in (64, 128, 256)]


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
        step = [f'sch.compute_inline(sch.get_sblock("{bname}", func_name="main"))']
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
    head = [f'b = sch.get_sblock("{name}", func_name="main")', "loops = sch.get_loops(b)",
            f"outer = sch.fuse(*loops[:{k}])" if k > 1 else "outer = loops[0]"]
    producers = [bn for bn, _, _, bk in reversed(blocks[:-1]) if "R" in bk]
    compute_at = [f'sch.compute_at(sch.get_sblock("{p}", func_name="main"), outer)' for p in producers]
    base = lines + head + compute_at + ["sch.parallel(outer)"]
    if _try_lines(sch, base) is None:
        base = lines + head + ["sch.parallel(outer)"]
        if _try_lines(sch, base) is None:
            return []
    out = [(base, f"row-wise {name}: inline elementwise producers, parallel outer loop, "
                  f"{len(producers)} reduction producer(s) computed per row")]
    if out_kinds.endswith("S") and len(out_loops) > k:
        for vec in (8, 16):
            vl = base + ["loops = sch.get_loops(b)", f"_, vi = sch.split(loops[-1], factors=[None, {vec}])",
                         "sch.vectorize(vi)"]
            if _try_lines(sch, vl) is not None:
                out.append((vl, f"row-wise {name} (as above) + vectorize the inner loop by {vec}"))
    return out


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
        out.append((lines, f"GEMM tiling of {name}: {ti}x{tj} tiles, k by {tk}, vectorize j, parallel outer"))
    return out


RULES: dict[str, Rule] = {
    "fuse_rows": rule_fuse_rows,
    "gemm_tile": rule_gemm_tile,
    "parallel_vectorize": rule_parallel_vectorize,
    "tile": rule_tile,
    "reorder": rule_reorder,
    "unroll": rule_unroll,
    "cache_write": rule_cache_write,
    "inline": rule_inline,
    "gpu_bind": rule_gpu_bind,
}


#: Rules that write a whole schedule for a PrimFunc (tried first).
COMPOSITE = ("fuse_rows", "gemm_tile")


def schedule_variants(
    funcs: dict[str, Any], schedule_text: str, gpu: bool = False, rules: list[str] | None = None,
    check: bool = True,
) -> list[Variant]:
    """Schedule variants of a candidate, one rule application each.

    Parameters
    ----------
    funcs:
        The candidate's lowered (unscheduled) PrimFuncs at the build shape.
    schedule_text:
        The candidate's current schedule; variants append to it.
    gpu:
        Target needs thread binding (enables ``gpu_bind``, disables CPU rules).
    rules:
        Names from :data:`RULES` (default: all).
    check:
        Keep only variants whose statements all apply (replayed here).
    """
    import tvm
    from tvm.s_tir import Schedule

    current, _, _ = replay_schedule(funcs, schedule_text)
    base = schedule_lines(schedule_text)
    out: list[Variant] = []
    for fname, func in current.items():
        sch = Schedule(tvm.IRModule({"main": func}))
        for bname, _, loops, kinds in _blocks(sch):
            for rname in rules or list(RULES):
                for lines, desc in RULES[rname](sch, bname, loops, kinds, gpu):
                    per = {k: list(v) for k, v in base.items()}
                    per.setdefault(fname, [])
                    per[fname] = per[fname] + lines
                    text = render_schedule(per)
                    if check:
                        _, _, failed = replay_schedule(funcs, text)
                        if failed:
                            continue
                    out.append(Variant("schedule", text, rname, fname, desc))
    return out


def graph_variants(graph_text: str) -> list[Variant]:
    """Graph-level alternatives: the build mode switched (``symbolic`` -> ``static``
    first: code specialized per shape, so loop extents are constants and split
    factors that divide them need no tail; a 256³ GEMM with the ``gemm_tile``
    recipe ran 0.14x of eager PyTorch symbolic and 0.9-1.0x static on 2 cores),
    then the other fusion choices (``FuseOps``+``FuseTIR`` on/off)."""
    header, _ = parse_graph(graph_text)
    out = []
    if header.static_shape is None:
        other = "static" if header.build == "symbolic" else "symbolic"
        out.append(Variant("graph", with_build(graph_text, other), "build", "",
                           f"build: {header.build} -> {other}"
                           + (" (specialized per shape)" if other == "static" else " (one build, every shape)")))
    out += [
        Variant("graph", with_fusion(graph_text, f), "fusion", "", f"fusion: {header.fusion} -> {f}")
        for f in FUSION_CHOICES
        if f != header.fusion
    ]
    return out
