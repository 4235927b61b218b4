"""The ``schedule`` level: TensorIR schedules written as Python text.

A schedule text defines, for each PrimFunc it schedules, a function
``def schedule_<func name>(sch: tvm.s_tir.Schedule) -> None`` whose ``sch``
works on that PrimFunc alone (it is the module's ``main``, so a trace's
``func_name="main"`` applies), and optionally one ``def schedule(sch)`` over a
Schedule of the whole module of PrimFuncs (``sch.work_on(name)`` selects one).
PrimFuncs without a function stay unscheduled. Statements run with ``sch``,
``tvm`` and ``T`` (``tvm.script.tirx``) in scope, so a MetaSchedule or dlight
trace (``Trace.as_python()``) pastes in as is; nothing the text defines
outside its schedule functions is (a step that names such a helper fails
with a ``NameError`` that says so, :func:`module_names`).

:func:`replay_schedule` runs each top-level statement on its own and reports the
ones that fail (e.g. after a graph change renamed a block) instead of stopping.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from typing import Any

from kstrata.pysyntax import parse_module

_PREFIX = "schedule_"
HEADER = "# kstrata-tvm schedule: one `def schedule_<primfunc>(sch)` per scheduled PrimFunc\n"


class ScheduleTextError(Exception):
    """A schedule text that does not parse or defines no schedule functions."""


@dataclass(frozen=True)
class Step:
    """One top-level statement of a schedule function, with its outcome."""

    func: str
    lineno: int
    code: str
    error: str = ""


def _namespace(sch: Any) -> dict[str, Any]:
    import tvm
    from tvm.script import tirx as T

    return {"sch": sch, "tvm": tvm, "T": T, "unit_reductions": unit_reductions, "__builtins__": __builtins__}


def _loop_values(stmt: ast.stmt, ns: dict[str, Any], before: dict[str, Any]) -> str:
    """`` (in the iteration where name = 'compute2')``: the loop variables of
    ``stmt`` when it is a ``for`` loop, as they stood when it raised, so an
    error such as TVM's "The block s_tir.SBlock#0 is an output block" names the
    block a loop over names was at (queue round 5). ``before`` holds their
    values before the statement ran: unchanged values (the loop raised before
    its first iteration, or they are not plain strings or integers) give ``""``."""
    if not isinstance(stmt, ast.For) or not before:
        return ""
    if all(ns.get(n) is v for n, v in before.items()) or any(type(ns.get(n)) not in (str, int) for n in before):
        return ""
    return " (in the iteration where " + ", ".join(f"{n} = {ns[n]!r}" for n in before) + ")"


def _missing_block_note(sch: Any, func: str, message: str) -> str:
    """For TVM's "Cannot find a block with the name: X", the names of the
    PrimFunc's blocks at that point of the schedule (earlier steps may have
    inlined some), ``" (the blocks of <func> here: a, b, ...)"``; ``""`` for any
    other error or when they cannot be read. Queue round rt72: a schedule on
    the legalized graph's block name (T_layer_norm) after a graph change
    named its blocks y, s_part, ...; the error named only the missing one."""
    if "Cannot find a block with the name" not in message:
        return ""
    try:
        root = sch.get_sblock("root", func_name="main")
        names = [sch.get(b).name_hint for b in sch.get_child_blocks(root)]
    except Exception:  # noqa: BLE001 - a note, never a second error
        return ""
    return f" (the blocks of {func or 'main'} here: {', '.join(names)})" if names else ""


def _reduction_loop_note(message: str) -> str:
    """For TVM's "... some block iter whose block binding contains the loop
    var is not a data parallel block iter" (``vectorize``, ``parallel`` or
    ``bind`` of a loop that a block reduces over), what that means and the two
    ways out; ``""`` for any other error. Queue round rt75: ``sch.vectorize``
    of the inner split of layer_norm's ``lv_sum`` reduction loop read "with
    regard to block s_tir.SBlock#0 ... not a data parallel block iter", which
    names neither the reduction nor a remedy."""
    if "not a data parallel block iter" not in message:
        return ""
    return (" (that loop is a reduction loop of the block, e.g. the k of a row sum: vectorize, parallelize or "
            "bind only its spatial loops; to vectorize a sum, split the reduction loop and `sch.rfactor(inner, "
            "0)` first, then vectorize the rfactor block's spatial loop, or write partial sums as a block of "
            "their own at the graph level)")


def _failing_line(stmt: ast.stmt, error: BaseException, filename: str) -> tuple[int, str, str]:
    """``(line, code, where)`` of the statement inside ``stmt`` that raised
    ``error`` (the innermost frame of the schedule's own code, ``filename``):
    for a ``for`` loop, the statement in its body, ``(11, "sch.vectorize(l)",
    " (in the `for` at line 8)")``, not the whole loop at its first line
    (queue round 2026-12-05: the message quoted a five-line loop and marked
    its ``for`` line, though ``sch.vectorize`` in it had failed). A simple
    statement gives its own line and text, and ``where`` is ``""``."""
    line, tb = stmt.lineno, error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    inner = [n for n in ast.walk(stmt) if isinstance(n, ast.stmt) and n.lineno == line and n is not stmt]
    if line == stmt.lineno or not inner:
        return stmt.lineno, ast.unparse(stmt), ""
    text = ast.unparse(inner[-1]).splitlines()[0]
    return line, text, f" (in the `{type(stmt).__name__.lower()}` at line {stmt.lineno})"


def parse_schedule(text: str) -> dict[str, list[ast.stmt]]:
    """Schedule functions in ``text``: PrimFunc name (``""`` for the module-wide
    ``schedule``) -> its body statements.

    Raises
    ------
    ScheduleTextError
        When the text is not valid Python.
    """
    try:
        tree = parse_module(text)
    except SyntaxError as e:
        raise ScheduleTextError(f"schedule text line {e.lineno}: {e.msg}") from e
    out: dict[str, list[ast.stmt]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            if node.name == "schedule":
                out[""] = node.body
            elif node.name.startswith(_PREFIX):
                out[node.name[len(_PREFIX):]] = node.body
    return out


def module_names(text: str) -> set[str]:
    """Names ``text`` defines outside its schedule functions (helpers,
    constants, imports): none of them is in scope when a schedule function's
    statements run (each statement runs with ``sch``, ``tvm`` and ``T`` only)."""
    try:
        tree = parse_module(text)
    except SyntaxError:
        return set()
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name != "schedule" and not node.name.startswith(_PREFIX):
                out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out


def _run_steps(sch: Any, func: str, body: list[ast.stmt], strict: bool,
               outside: set[str] | frozenset[str] = frozenset()) -> tuple[list[Step], list[Step]]:
    ns = _namespace(sch)
    applied: list[Step] = []
    failed: list[Step] = []
    for stmt in body:
        code = ast.unparse(stmt)
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # docstring
        if isinstance(stmt, ast.Pass):
            continue
        before = {n.id: ns.get(n.id) for n in ast.walk(stmt.target) if isinstance(n, ast.Name)} \
            if isinstance(stmt, ast.For) else {}
        try:
            exec(compile(ast.Module([stmt], []), f"<schedule_{func}>", "exec"), ns)  # noqa: S102
        except Exception as e:  # noqa: BLE001 - a failing step is data
            msg = str(e).strip().splitlines()
            error = f"{type(e).__name__}: {msg[-1] if msg else ''}"[:300]
            if isinstance(e, NameError) and getattr(e, "name", None) in outside:
                error += (f" ({e.name} is defined outside schedule_{func}; module-level names are not visible "
                          "there: put every statement inside the schedule function)")
            error += _loop_values(stmt, ns, before) + _missing_block_note(sch, func, str(e)) \
                + _reduction_loop_note(str(e))
            step = Step(func, stmt.lineno, code, error)
            if strict:
                line, what, where = _failing_line(stmt, e, f"<schedule_{func}>")
                raise ScheduleTextError(f"schedule_{func} line {line} `{what}`{where} failed: {step.error}") from e
            failed.append(step)
        else:
            applied.append(Step(func, stmt.lineno, code))
    return applied, failed


def _merged_twin(name: str, funcs: dict[str, Any]) -> str | None:
    """The PrimFunc that a missing numbered name (``matmul1``) was merged into.

    Relax's legalization names the PrimFuncs of one operator ``matmul``,
    ``matmul1``, ``matmul2``, ... and keeps one of those that are identical at
    the module's shapes, so a schedule written at one shape can name a
    numbered PrimFunc that another shape does not have. Returns ``name``'s
    base (trailing digits removed) when that base is a PrimFunc here, else
    ``None`` (a name that exists at no shape stays an error).
    """
    base = name.rstrip("0123456789")
    if base == name or not base:
        return None
    return base if base in funcs else None


def _renumbered(name: str, funcs: dict[str, Any], named: dict[str, Any]) -> str | None:
    """The PrimFunc here that a missing ``name`` is, numbered otherwise: Relax
    numbers the operators it fuses into a name (``multiply1``, ``multiply2``) by
    how many of each the module has, and that count changes with the shape (a
    mean over one element is no division: rmsnorm's
    ``fused_multiply_fused_mean_add_tir_rsqrt_multiply1_multiply2`` at the
    nominal shape is ``..._multiply_multiply1`` at D=1). The one PrimFunc whose
    name is ``name`` without its digits, and that the schedule does not name
    itself; else None (then :func:`_merged_twin` or an error)."""
    import re

    if name in funcs:
        return None
    key = re.sub(r"\d+", "", name)
    found = [n for n in funcs if n not in named and re.sub(r"\d+", "", n) == key]
    return found[0] if len(found) == 1 else None


def replay_schedule(
    funcs: dict[str, Any], schedule_src: str, strict: bool = False
) -> tuple[dict[str, Any], list[Step], list[Step]]:
    """Apply ``schedule_src`` to PrimFuncs, statement by statement.

    Parameters
    ----------
    funcs:
        PrimFunc name -> ``tvm.tirx.PrimFunc`` (static shapes), as in
        :attr:`kstrata.backends.tvm.lower.Lowered.funcs`.
    schedule_src:
        Schedule text (module docstring).
    strict:
        Raise :class:`ScheduleTextError` at the first failing statement
        instead of recording it.

    Returns
    -------
    (funcs, applied, failed)
        The scheduled PrimFuncs (same names, ``global_symbol`` kept), and the
        statements that applied / failed. A ``schedule_<name>`` for a PrimFunc
        that no longer exists is one failed step naming it, unless ``name`` is
        a numbered twin (``matmul1``) merged into its base at these shapes
        (:func:`_merged_twin`): then it is skipped, as an applied comment step.

    Raises
    ------
    ScheduleTextError
        When the text does not parse, or on a failing step when ``strict``.
    """
    import tvm
    from tvm.s_tir import Schedule

    fns = parse_schedule(schedule_src)
    outside = module_names(schedule_src)
    out = dict(funcs)
    applied: list[Step] = []
    failed: list[Step] = []
    for name, body in fns.items():
        if name == "":
            continue
        here = name if name in out else _renumbered(name, out, fns)
        if here is None:
            twin = _merged_twin(name, out)
            if twin is not None:
                # legalization made one PrimFunc of two that are identical at this shape (sdpa's two
                # GEMMs when S == D): the one left gets its own schedule_<twin>, this one has nothing to do
                applied.append(Step(name, body[0].lineno if body else 0,
                                    f"# schedule_{name} skipped: at this shape {name!r} is the same PrimFunc "
                                    f"as {twin!r}"))
                continue
            step = Step(name, body[0].lineno if body else 0, f"schedule_{name}",
                        f"no PrimFunc named {name!r}; PrimFuncs are {sorted(out)}")
            if strict:
                raise ScheduleTextError(step.error)
            failed.append(step)
            continue
        if here != name:
            # the same PrimFunc numbered otherwise at this shape (rmsnorm's `...multiply1_multiply2` is
            # `...multiply_multiply1` at D=1): its schedule applies to it
            applied.append(Step(name, body[0].lineno if body else 0,
                                f"# schedule_{name} applied to {here!r}: its name at this shape"))
        sch = Schedule(tvm.IRModule({"main": out[here]}))
        a, f = _run_steps(sch, name, body, strict, outside)
        applied += a
        failed += f
        out[here] = sch.mod["main"].with_attr("global_symbol", here)
    if "" in fns:
        sch = Schedule(tvm.IRModule(dict(out)))
        a, f = _run_steps(sch, "", fns[""], strict, outside)
        applied += a
        failed += f
        out = {gv.name_hint: fn.with_attr("global_symbol", gv.name_hint) for gv, fn in sch.mod.functions.items()}
    return out, applied, failed


def replay_with_gpu_defaults(funcs: dict[str, Any], schedule_src: str, target: Any,
                             strict: bool = True) -> tuple[dict[str, Any], list[Step], list[Step]]:
    """:func:`replay_schedule` for a GPU target: the PrimFuncs the text does not
    name get :func:`default_gpu_schedule` (dlight's rules), as every GPU build
    does. Same returns and errors as :func:`replay_schedule`."""
    out, applied, failed = replay_schedule(funcs, schedule_src, strict=strict)
    named = set(parse_schedule(schedule_src))
    rest = {n: f for n, f in funcs.items() if n not in named}
    if rest:
        done, _, _ = replay_schedule(rest, default_gpu_schedule(rest, target), strict=True)
        out.update(done)
    return out, applied, failed


def render_schedule(per_func: dict[str, list[str]], comment: str = "") -> str:
    """Schedule text from per-PrimFunc statement lists (e.g. ``Trace.as_python()``)."""
    parts = [HEADER.rstrip("\n")]
    if comment:
        parts += ["# " + ln for ln in comment.splitlines()]
    for name, lines in per_func.items():
        body = textwrap.indent("\n".join(lines) if lines else "pass", "    ")
        parts.append(f"\n\ndef {_PREFIX}{name}(sch):\n{body}")
    if not per_func:
        parts.append("\n\ndef schedule(sch):\n    pass")
    return "\n".join(parts) + "\n"


def schedule_lines(text: str) -> dict[str, list[str]]:
    """The statements of each ``schedule_<name>`` function of ``text`` as source lines."""
    return {
        name: [ast.unparse(s) for s in body if not isinstance(s, ast.Pass)]
        for name, body in parse_schedule(text).items()
        if name
    }


def trace_lines(sch: Any) -> list[str]:
    """A schedule's trace as Python statements (postprocessing steps removed)."""
    return [str(x) for x in sch.trace.as_python(remove_postproc=True)]


def unit_reduction_schedule(func: Any, threads: int = 256) -> list[str] | None:
    """A GPU schedule for a PrimFunc whose reduction blocks all have reduction loops
    of extent 1 at this shape (rmsnorm's mean at D=1), as statements (the trace
    of :func:`unit_reductions`); ``None`` for a PrimFunc without such a
    reduction (or with another reduction beside it).

    dlight's rules drop a unit reduction iterator (``transform_block_layout``) but
    keep the block's init, then ``reverse_compute_inline`` the epilogue into it:
    the block ran ``out = x * rsqrt(0 + eps) * w`` as its init and
    ``out = x * rsqrt(out + x^2 + eps) * w`` as its update, wrong on every row
    (the shipped tvm-cuda rmsnorm start on the H200's hidden D=1 probe,
    2026-12-05; benchmarks/results/gpu_tvm_cuda_unit_reduction.txt). Such a
    shape is a test's edge, not a size worth a fast schedule.
    """
    import tvm

    sch = tvm.s_tir.Schedule(tvm.IRModule({"main": func}))
    try:
        return trace_lines(sch) if unit_reductions(sch, threads) else None
    except Exception:  # noqa: BLE001 - the loops are not in the simple form this handles: the rules decide
        return None


def _unit_reduction_blocks(sch: Any) -> list[Any] | None:
    """The root's child blocks when at least one is a reduction and every
    reduction loop of every block has extent 1 (and each block has a spatial
    loop to bind), else None."""
    import tvm

    try:
        blocks = sch.get_child_blocks(sch.get_sblock("root", func_name="main"))
    except Exception:  # noqa: BLE001 - no root block: not this case
        return None
    unit = False
    for block in blocks:
        stmt = sch.get(block)
        reduce = [iv for iv in stmt.iter_vars if iv.iter_type != tvm.tirx.IterVar.DataPar]
        spatial = len(stmt.iter_vars) - len(reduce)
        if spatial == 0 or len(sch.get_loops(block)) < spatial:
            return None
        if not reduce:
            continue
        if not all(isinstance(iv.dom.extent, tvm.tirx.IntImm) and int(iv.dom.extent) == 1 for iv in reduce):
            return None  # a real reduction: another schedule takes it
        unit = True
    return blocks if unit else None


def unit_reductions(sch: Any, threads: int = 256) -> bool:
    """Schedule the PrimFunc ``main`` of ``sch`` for a GPU when every reduction
    it has runs one iteration at this shape (a size-1 test: rmsnorm at D=1,
    cross_entropy at C=1, a GEMM at K=1); return whether it did.

    Each block's spatial loops are fused, split by ``threads`` and bound to
    ``blockIdx.x``/``threadIdx.x``: one kernel per block, in order, nothing
    inlined, so no reduction's init meets its epilogue
    (:func:`unit_reduction_schedule` says why dlight's rules fail there). A
    PrimFunc without a reduction, or with one of more than one iteration, is
    left unchanged (``False``). Also a name of the schedule text's namespace:
    the built-in GPU recipes start with ``if not unit_reductions(sch):`` so that
    the schedule they write at the nominal shape also builds at a size-1 test,
    where TVM's lowering drops the unit loops their statements name.

    Parameters
    ----------
    sch:
        A ``tvm.s_tir.Schedule`` of one PrimFunc named ``main`` (static shapes).
    threads:
        Threads per block (``threadIdx.x`` extent).

    Raises
    ------
    tvm.error.TVMError
        Where a block's loops are not in the simple nest this handles (a
        schedule already applied to them): the statement fails, located.
    """
    import tvm

    blocks = _unit_reduction_blocks(sch)
    if blocks is None:
        return False
    for block in blocks:
        spatial = sum(1 for iv in sch.get(block).iter_vars if iv.iter_type == tvm.tirx.IterVar.DataPar)
        outer = sch.get_loops(block)[:spatial]
        fused = sch.fuse(*outer) if len(outer) > 1 else outer[0]
        bx, tx = sch.split(fused, [None, threads])
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")
    return True


def default_gpu_schedule(funcs: dict[str, Any], target: Any) -> str:
    """Thread-bound schedules for a GPU target (as text).

    Each PrimFunc gets the first applicable rule of dlight's Matmul, GEMV,
    LowBatchGEMV, Reduction, GeneralReduction and Transpose
    (``tvm.s_tir.dlight.gpu``); a PrimFunc none of them takes that has no
    reduction (elementwise, broadcast, injective) gets the ``gpu_elementwise``
    recipe at :data:`~kstrata.backends.tvm.gpu_rules.ELEMENTWISE_DEFAULT`
    (256 threads per block, each thread reading and writing 4 contiguous
    elements as one 16-byte vector access where the element count divides
    1024, :func:`~kstrata.backends.tvm.gpu_rules.default_elementwise`), and
    only what that does not take gets dlight's Fallback (one scalar element
    per thread, 1024 threads: relu ran at 42% of the H200's copy bandwidth
    with it, benchmarks/results/gpu_tvm_cuda.txt). The resulting trace is the
    function's schedule. Tensor-core tensorization is turned off
    (``dlight.do_not_tensorize``): in this TVM build a failed attempt crashes
    the process.

    Raises
    ------
    ScheduleTextError
        When no rule binds a PrimFunc's loops to threads.
    """
    import tvm
    import tvm.s_tir.dlight as dl

    from kstrata.backends.tvm.gpu_rules import default_elementwise

    rules = [dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.LowBatchGEMV(), dl.gpu.Reduction(),
             dl.gpu.GeneralReduction(), dl.gpu.Transpose(), None, dl.gpu.Fallback()]
    per_func: dict[str, list[str]] = {}
    with target:
        for name, func in funcs.items():
            # no tensor-core attempt: a failed sch.tensorize formats its error through
            # ToJSONGraph, which segfaults with apache-tvm-ffi 0.1.15.x (see tune.py)
            main = tvm.IRModule({"main": func.with_attr("dlight.do_not_tensorize", True)})["main"]
            unit = unit_reduction_schedule(func)
            if unit is not None:  # dlight's rules are wrong there (see unit_reduction_schedule)
                per_func[name] = unit
                continue
            for rule in rules:
                if rule is None:
                    lines = default_elementwise(func, target)
                else:
                    try:
                        sch = rule.apply(main, target, False)
                    except Exception:  # noqa: BLE001 - try the next rule
                        sch = None
                    lines = trace_lines(sch) if sch is not None else None
                if lines is None:
                    continue
                try:  # the trace must replay on its own
                    replay_schedule({name: func}, render_schedule({name: lines}), strict=True)
                except ScheduleTextError:
                    continue
                per_func[name] = lines
                break
            else:
                raise ScheduleTextError(f"no dlight GPU rule schedules PrimFunc {name}")
    return render_schedule(per_func, "default GPU schedule: tvm.s_tir.dlight rules, vectorized elementwise")
