"""Prompt assembly: a :class:`PromptContext` rendered through the jinja2
templates in ``agents/prompts/`` into chat messages.

Templates (data files, one per role): ``system.j2`` (who the model is, the
integrity rules, the answer format), ``single.j2`` (one agent, any level),
``graph.j2``, ``schedule.j2``, ``source.j2`` (the per-level agents), all
extending ``_base.j2`` (task contract, target hardware, the current candidate
with the other levels summarized, feedback, what may change) and including
``scope_<level>.j2``; ``retry.j2`` turns a :class:`~kstrata.agents.parse.ParseError`
into the follow-up message. ``api/*.md`` are the short API sheets per backend
family and level (checked against the installed toolchain, whose version they
name); ``integrity.toml`` words the integrity checks for backend families
whose candidates are not Python kernels (TVM).

Hidden tests stay hidden by construction: the context holds a
:class:`TaskContract`, built by :meth:`TaskContract.from_task` from public data
only (the reference without its metadata dict, the small and nominal shapes,
dtype, tolerance, the range of hidden sizes per variable in rough words), and
a :class:`Feedback` built from the node's public feedback; there is no field
through which a hidden shape, seed or the run secret could reach a prompt.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from kstrata.agents.knowledge import gpu_target
from kstrata.agents.router import derived_below
from kstrata.measure.profilers.findings import DISTRUST_PREFIXES, ceiling_finding, roofline_finding
from kstrata.pysyntax import parse_module
from kstrata.tasks.loader import metadata_assigns
from kstrata.tasks.meta import DRAW_SUMMARY
from kstrata.llm.base import Message

PROMPTS = Path(__file__).with_name("prompts")
ROLES = ("single", "graph", "schedule", "source")
LEVELS = ("graph", "schedule", "source")

#: Integrity rules stated to the model when the verifier's registry is not
#: importable (mirrors issue 3's list; normally :func:`integrity_rules` reads
#: :data:`kstrata.verify.integrity.registry.CHECKS`, so the prompt states
#: exactly what is checked).
DEFAULT_RULES = (
    "no call of the reference Model, of torch.nn.functional / ATen compute ops or other "
    "high-level libraries inside DSL code (allocation, views and metadata are fine)",
    "no try/except that falls back to another implementation",
    "no caching of outputs across calls: new input values must give new outputs",
    "no side streams; no threads, subprocesses, files or network",
    "no patching of torch, timers, triton or kstrata; no __import__, getattr on modules, "
    "globals, gc, inspect or frame tricks",
    "no precision downgrade (TF32, fp16/bf16 compute) that the task does not allow",
    "outputs must be fresh plain tensors of the reference's dtype, shape and device, "
    "not aliasing inputs; inputs must stay unchanged",
)

#: what a prompt adds to a draw's line of :data:`~kstrata.tasks.meta.DRAW_SUMMARY` (the verifier's words too).
#: near_zero: hidden tests zero whole rows (:func:`kstrata.tasks.inputs.zero_slices`); where the reference is
#: NaN/Inf there, as fake_quant_per_token's 0/0 scale, so is the float64 oracle, and those elements are outside
#: the domain (:func:`kstrata.verify.domain.nonfinite_from_finite`). Queue round rt72: the prompt said "an
#: all-zero row must give what the reference gives there" beside that task's "rows stay nonzero".
DRAW_PROMPT_NOTES = {
    "near_zero": "; where the reference itself gives NaN or Inf on such a row (a division by the row's maximum or "
                 "norm with no epsilon), those elements are not judged",
}


@lru_cache(maxsize=1)
def _family_rules() -> dict[str, dict[str, str]]:
    return tomllib.loads((PROMPTS / "integrity.toml").read_text())


def integrity_rules(backend: str) -> tuple[str, ...]:
    """The integrity checks that apply to ``backend``, as ``name: description``:
    ``integrity.toml``'s wording for its family where it has one (TVM: no
    PyTorch/Triton rules), else the verifier registry's descriptions, with
    its ``[reworded.<family>]`` lines in place of those written for another
    DSL (TileLang: no "imports only torch, triton", no ``tl.dot``)."""
    rules = _family_rules()
    family = rules.get(backend.split("-")[0])
    if family:
        return tuple(f"{name}: {text}" for name, text in family.items())
    try:
        from kstrata.verify.integrity.registry import CHECKS, applies
    except ImportError:
        return DEFAULT_RULES
    reworded = rules.get("reworded", {}).get(backend.split("-")[0], {})
    return tuple(f"{c.name}: {reworded.get(c.name, c.description)}" for c in CHECKS.values()
                 if applies(c.name, backend))


def toolchain(backend: str) -> str:
    """The toolchain a backend's candidates are written for, with its version
    (package metadata only; nothing is imported), e.g. ``"TVM 0.27.0.post1"``."""
    from importlib.metadata import PackageNotFoundError, version

    family = backend.split("-")[0]
    if family == "tilelang":
        from kstrata.backends.envs import TILELANG

        pin = next((p.split("==")[1] for p in TILELANG.packages if p.startswith("tilelang==")), "")
        return f"TileLang {pin} (in its own environment)".replace("  ", " ")
    dist, label = {"tvm": ("apache-tvm", "TVM"), "triton": ("triton", "Triton"),
                   "pytorch": ("torch", "PyTorch")}.get(family, ("", ""))
    if not dist:
        return ""
    try:
        return f"{label} {version(dist)}"
    except PackageNotFoundError:
        return label


#: code that computes exponentials over rows (softmax-like): the masked-lane NaN hint applies
_EXP_OPS = re.compile(r"\b(?:exp2?|expm1|softmax|log_softmax|logsumexp|softmin|cross_entropy|nll_loss)\b")
#: code with a matrix product: the ``tl.dot`` hint applies (``a @ b``, not a decorator)
_DOT_OPS = re.compile(r"\b(?:matmul|mm|bmm|addmm|baddbmm|einsum|linear|Linear|dot|conv[123]d|Conv[123]d|"
                      r"scaled_dot_product_attention)\b|[\w)\]][ \t]*@[ \t]*[\w(]")


#: code that rounds to an integer grid (quantization): the rounding hint applies
_ROUND_OPS = re.compile(r"\b(?:round|rint|nearbyint|quantize\w*|int8|uint8)\b")


def api_sheet(backend: str, level: str, code: str | None = None) -> str:
    """The short API sheet for ``level`` on ``backend`` (``api/<family>_<level>.md``
    or ``api/<family>.md``), rendered with the toolchain version; ``""`` if none.

    ``code`` (the task's reference and the candidate's text): op-specific hints
    are kept only when it uses the ops they are about (exponentials or a
    softmax-like op: masked lanes turning into NaN; a matrix product:
    ``tl.dot``; rounding to an integer grid: how to round half to even);
    ``None`` keeps every hint. Interpreter backends (``*-interp``)
    get the interpreter's pitfalls."""
    family = backend.split("-")[0]
    uses_exp = code is None or bool(_EXP_OPS.search(code))
    uses_dot = code is None or bool(_DOT_OPS.search(code))
    uses_round = code is None or bool(_ROUND_OPS.search(code))
    for name in (f"api/{family}_{level}.md", f"api/{family}.md"):
        if (PROMPTS / name).is_file():
            return environment().get_template(name).render(
                toolchain=toolchain(backend), interpreter=backend.endswith("-interp"),
                uses_exp=uses_exp, uses_dot=uses_dot, uses_round=uses_round, c_target=backend == "tilelang-c",
                level=level,
                # TVM builds shape-generic code on llvm only (TVMBackend.symbolic_builds): elsewhere per shape
                backend=backend, symbolic_builds=backend == "tvm-llvm").strip()
    return ""


@lru_cache(maxsize=1)
def _examples() -> dict[str, Any]:
    return tomllib.loads((PROMPTS / "examples.toml").read_text())


def answer_example(backend: str, level: str) -> str:
    """A short valid answer that edits ``level`` on ``backend`` (format
    only), from ``examples.toml``: ``<family>.<level>``, else ``<family>``,
    else ``default``."""
    data = _examples()
    family = backend.split("-")[0]
    for entry in (data.get(family, {}).get(level), data.get(family), data["default"]):
        if isinstance(entry, Mapping) and isinstance(entry.get("change"), str):
            return entry["change"].strip()
    return ""


def _forward_params(source: str) -> list[str] | None:
    """The parameter names of the reference ``Model.forward`` (without
    ``self``), read from the task's text; ``None`` when it does not parse or
    has no such method."""
    try:
        tree = parse_module(source)
    except (SyntaxError, ValueError):
        return None
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    fwd = next((n for n in (model.body if model else ()) if isinstance(n, ast.FunctionDef) and n.name == "forward"),
               None)
    return [a.arg for a in fwd.args.args[1:]] if fwd is not None else None


def drawn_inputs(source: str, meta: Any) -> str:
    """Which inputs the task's input draws change, in words, where not all of
    them (``meta.dist_inputs`` set and a draw other than ``normal``): e.g.
    "the draws change `w` only; `scale` is not drawn (... computed before the
    draw and not recomputed after it)". ``""`` where every
    floating input is drawn (``dist_inputs`` None) or the names are unknown.

    Queue round rt78 (quantize_per_channel, tvm-llvm): the prompt said "every
    test runs the task's inputs under one of these" and the description
    "s = 0.8 * amax|w[n]| / 127, so ... its largest values saturate", while the
    judge draws w alone (``dist_inputs [0]``, kstrata.tasks.inputs.apply_distribution)
    and keeps the scale get_inputs() computed from the undrawn w: under
    `outliers` or `shifted` most of a row saturates."""
    only = getattr(meta, "dist_inputs", None)
    if only is None or not [d for d in getattr(meta, "distributions", ()) if d != "normal"]:
        return ""
    names = _forward_params(source)
    if not names or any(i >= len(names) for i in only):
        return ""
    drawn = [f"`{names[i]}`" for i in only]
    kept = [f"`{n}`" for i, n in enumerate(names) if i not in only]
    if not drawn:
        return "the draws change no input: every test uses the values get_inputs() makes"
    rest = (f"; {', '.join(kept)} {'is' if len(kept) == 1 else 'are'} not drawn (a value get_inputs() derives "
            "from a drawn input, such as a scale, is computed before the draw and not recomputed after it)"
            ) if kept else ""
    return f"the draws change {', '.join(drawn)} only{rest}"


def public_reference(source: str) -> str:
    """The task module's text without its ``KSTRATA = {...}`` metadata
    assignment (which lists the sweep shapes the hidden stage starts from)."""
    try:
        tree = parse_module(source)
    except SyntaxError:
        return source
    lines = source.splitlines(keepends=True)
    for node in reversed(metadata_assigns(tree)):
        del lines[node.lineno - 1 : node.end_lineno]
    return "".join(lines)


def _dtype_bound(dtype: str, tol: Any) -> tuple[float, float] | None:
    """``(atol, rtol)`` the judge adds for ``dtype`` (the task's own ``atol``/``rtol``
    where given, :data:`kstrata.verify.tolerance.DTYPE_BOUNDS` otherwise);
    ``None`` when unknown."""
    try:
        import torch

        from kstrata.verify.tolerance import dtype_bound
    except ImportError:
        return (tol.atol, tol.rtol) if tol.atol is not None and tol.rtol is not None else None
    dt = getattr(torch, str(dtype), None)
    if not isinstance(dt, torch.dtype):
        return None
    return dtype_bound(dt, tol)


def _quant_tolerance(tol: Any, outputs: Sequence[str] | None) -> str:
    """The quant policy's line: the integer-code rule, the floating metrics, or
    both where the outputs' dtypes are not known (``outputs`` None) or mixed.
    Queue round rt78: fake_quant_per_token (a float32 output "on the int8 grid")
    was told both, and its "int8 grid" read as the int8 codes the first rule
    names."""
    from kstrata.verify.tolerance import QUANT_ELEMENT_K

    # what the judge applies (kstrata.verify.tolerance, rounding): the metrics alone let a truncating or
    # wrongly clamped int8 kernel look inside them (queue-model round of 2026-12-04)
    integer = ("equal to the reference's, except one quantization step only where the exact value before the "
               "rounding is within rounding of a tie (round half to even, as torch.round; clamp to exactly the "
               "reference's range): a truncation or a clamp off by one fails")
    floating = (f"against the float64 oracle, cosine similarity >= {tol.cosine}, relative L1 error <= "
                f"{tol.rel_l1}, RMSE relative to the oracle's RMS <= {tol.rmse}, and no element off by more than "
                f"{QUANT_ELEMENT_K:g} x that RMSE allowance (or {tol.k:g} x the reference's own error where "
                "larger)")
    ints = [o for o in outputs or () if not o.startswith(("float", "bfloat", "complex"))]
    nonfinite = "NaN/Inf where the oracle is finite always fails"
    if outputs and len(ints) == len(outputs):
        return (f"the output is {', '.join(dict.fromkeys(outputs))} (integer codes): {integer}; the float "
                "metrics of the quant policy do not apply to it")
    if outputs and not ints:
        return (f"the output is {', '.join(dict.fromkeys(outputs))} (floating values, even where they lie on an "
                f"integer grid): {floating}; {nonfinite}; there is no integer-code rule for it")
    return f"integer outputs (int8 codes): {integer}; floating outputs: {floating}; {nonfinite}"


def _outputs(task: Any, meta: Any) -> list[str] | None:
    """The reference's output dtypes where the tolerance line depends on them
    (the quant policy, :func:`_quant_tolerance`), else ``None``: read once per
    task text at its first public shape."""
    if meta.tolerance.kind != "quant" or not task.small_shapes:
        return None
    from kstrata.tasks.signature import output_dtypes

    key = task.digest
    if key not in _OUTPUTS:
        _OUTPUTS[key] = output_dtypes(task, dict(task.small_shapes[0]))
    return _OUTPUTS[key]


#: :func:`_outputs` per task text (its digest).
_OUTPUTS: dict[str, list[str] | None] = {}


def _describe_tolerance(tol: Any, dtype: str = "", outputs: Sequence[str] | None = None) -> str:
    if tol.kind == "exact":
        return "outputs must be exactly equal to the reference"
    if tol.kind == "quant":
        return _quant_tolerance(tol, outputs)
    bound = _dtype_bound(dtype, tol)
    if bound is None:
        extra = f" (atol {tol.atol}, rtol {tol.rtol})" if tol.atol is not None or tol.rtol is not None else ""
        return (
            f"max error against a float64 oracle may not exceed {tol.k:g} x the reference's own "
            f"error in its dtype, plus a dtype-based bound{extra}; NaN/Inf where the oracle is "
            "finite always fails"
        )
    atol, rtol = bound
    own = "the task's" if tol.atol is not None or tol.rtol is not None else f"the {dtype} bound"
    floor = f"max({tol.floor:g}, {tol.k:g} x ref_err)" if tol.floor else f"{tol.k:g} x ref_err"
    reorder = (" (a test that fails this is checked again with an allowance for the reference's sums "
               "computed in another order added)" if tol.reductions else "")
    return (
        f"elementwise |out - oracle| <= {floor} + atol + rtol x |oracle| against a float64 oracle, "
        f"where ref_err is the reference's own max error in its dtype on the same inputs and "
        f"atol = {atol:g}, rtol = {rtol:g} ({own}){reorder}; NaN/Inf where the oracle is finite always fails"
    )


def _rough(value: int) -> str:
    """``value`` to two significant figures with a k/M suffix, e.g. ``"~66k"``."""
    for factor, suffix in ((1_000_000, "M"), (1000, "k"), (1, "")):
        if value >= factor:
            return f"~{float(f'{value / factor:.2g}'):g}{suffix}"
    return f"~{value}"


def _least(value: int) -> str:
    """A least size in words: ``1``, ``single digits``, ``tens`` or rough."""
    if value == 1:
        return "1"
    return "single digits" if value < 10 else "tens" if value < 100 else _rough(value)


def hidden_size_ranges(task: Any) -> tuple[str, ...]:
    """What sizes the hidden tests cover, per shape variable, in rough words
    (``"D from single digits to ~66k"``) from
    :func:`kstrata.verify.plan.size_bounds` (the task's metadata and the
    perturbation rule; no secret, no draw): enough to design for the whole
    range, never a hidden shape. A variable that never changes says so with
    the nominal value (public)."""
    from kstrata.verify.plan import size_bounds

    nominal = dict(task.nominal_shape)
    out = []
    for name, (lo, hi) in size_bounds(task).items():
        if lo == hi:
            if nominal.get(name) == lo:
                out.append(f"{name} always {lo}")
            continue
        out.append(f"{name} from {_least(lo)} to {_rough(hi)}")
    return tuple(out)


def _has_prime(task: Any) -> bool:
    values = {v for s in task.sweep_shapes for v in s.values() if isinstance(v, int) and v > 2}
    return any(all(v % d for d in range(2, int(v ** 0.5) + 1)) for v in values)


@dataclass(frozen=True)
class TaskContract:
    """What a prompt may say about a task: public facts only.

    Attributes
    ----------
    name, description:
        The task's name and one-line description.
    reference:
        The reference module's source without its metadata dict.
    dtype:
        The task's dtype, e.g. ``"float32"``.
    nominal_shape:
        The task's nominal shape ``{variable: size}`` (a run may time at a smaller one).
    public_shapes:
        The public test shapes (the task's small shapes).
    tolerance, precision:
        The correctness policy and the allowed precision shortcuts, in words.
    flops, bytes:
        Work formulas over shape variables, or None.
    hidden_sizes:
        The sizes the hidden tests cover per shape variable, in rough words
        (:func:`hidden_size_ranges`); no hidden shape.
    draws:
        The task's input distributions, ``(name, what it is)`` each
        (:data:`kstrata.tasks.inputs.DRAW_SUMMARY`): public metadata; which
        seed meets which draw at which hidden shape stays hidden.
    hidden_primes:
        Whether prime sizes are among them.
    """

    name: str
    reference: str
    dtype: str
    nominal_shape: Mapping[str, int]
    public_shapes: tuple[Mapping[str, int], ...]
    tolerance: str
    precision: str = "full precision of the task dtype; no TF32 or reduced-precision compute"
    description: str = ""
    flops: str | None = None
    bytes: str | None = None
    hidden_sizes: tuple[str, ...] = ()
    hidden_primes: bool = False
    draws: tuple[tuple[str, str], ...] = ()
    drawn_inputs: str = ""

    @classmethod
    def from_task(cls, task: Any) -> "TaskContract":
        """The public contract of a :class:`kstrata.tasks.base.Task`."""
        meta = task.meta
        allowed = [
            n for n, ok in (("TF32", meta.precision.allow_tf32),
                            ("reduced-precision compute", meta.precision.allow_reduced_precision))
            if ok
        ]
        precision = (
            f"{' and '.join(allowed)} allowed" if allowed else cls.precision
        )
        if meta.precision.allow_reduced_precision and meta.dtype in ("float16", "bfloat16"):
            # queue round 5 (rmsnorm_fp16): "reduced-precision compute allowed" read as leave to square
            # and sum in float16; x*x overflowed on the large draw and every output was 0
            precision += (f" (arithmetic in {meta.dtype} is not rejected as such, but the outputs must still "
                          "pass the tolerance above on every draw: a square, exp or long sum that overflows or "
                          f"loses precision in {meta.dtype} needs a float32 accumulator)")
        return cls(
            name=task.name,
            reference=public_reference(task.source),
            dtype=meta.dtype,
            nominal_shape=dict(task.nominal_shape),
            public_shapes=tuple(dict(s) for s in task.small_shapes),
            tolerance=_describe_tolerance(meta.tolerance, meta.dtype, _outputs(task, meta)),
            precision=precision,
            description=meta.description,
            flops=meta.flops,
            bytes=meta.bytes,
            hidden_sizes=hidden_size_ranges(task),
            hidden_primes=_has_prime(task),
            draws=tuple((d, DRAW_SUMMARY.get(d, "") + DRAW_PROMPT_NOTES.get(d, ""))
                        for d in getattr(meta, "distributions", ())),
            drawn_inputs=drawn_inputs(task.source, meta),
        )


@dataclass(frozen=True)
class FeedbackItem:
    """One located diagnosis or error: kind, likely level, text."""

    kind: str
    text: str
    level: str | None = None


@dataclass(frozen=True)
class Speedup:
    baseline: str
    value: float
    ci_low: float | None = None
    ci_high: float | None = None


@dataclass(frozen=True)
class Feedback:
    """What the agent is told about the current candidate (public only).

    Attributes
    ----------
    verdict, check:
        The verdict kind and the check or stage that decided it.
    items:
        Compile errors, located correctness diagnosis, integrity findings.
    median_ms, speedups, roofline_fraction, bound:
        Timing at the run's timed shape (milliseconds), speedups per baseline,
        the fraction of the roofline bound reached and ``memory``/``compute``.
    findings:
        Profiler findings, one line each: not those a ``distrust`` line
        quotes, nor the at-the-ceiling one when a baseline is faster.
    distrust:
        Why the timing is not to be believed (untrusted after re-timing,
        overhead-dominated), one line each; empty when it is trusted.
    message:
        The verifier's message for a failed verdict (head and tail when
        long); ``""`` for a correct one.
    not_judged:
        The failed verdict is the judge's own failure (its process out of
        memory, an evaluator exception), not the candidate's
        (:func:`kstrata.agents.run_history.judge_failure`).
    """

    verdict: str = ""
    check: str | None = None
    items: tuple[FeedbackItem, ...] = ()
    median_ms: float | None = None
    speedups: tuple[Speedup, ...] = ()
    roofline_fraction: float | None = None
    bound: str | None = None
    findings: tuple[str, ...] = ()
    distrust: tuple[str, ...] = ()
    message: str = ""
    not_judged: bool = False

    @property
    def empty(self) -> bool:
        return not (self.verdict or self.items or self.median_ms is not None or self.findings)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> "Feedback":
        """From :meth:`kstrata.search.tree.Node.feedback`: ``{"verdict", "check",
        "evaluation": [{"kind", "level", "text", "data"}], "measurement":
        {"median_ms", "speedups", "roofline_fraction", "bound", "findings"}}``.
        Item ``data`` is left out (the text says what matters)."""
        data = data or {}
        items = tuple(
            FeedbackItem(str(i.get("kind", "note")), str(i.get("text", "")), i.get("level"))
            for i in (data.get("evaluation") or [])
            if isinstance(i, Mapping) and i.get("text")
        )
        m = data.get("measurement") or {}
        speedups = tuple(
            Speedup(str(s["baseline"]), float(s["value"]), s.get("ci_low"), s.get("ci_high"))
            for s in (m.get("speedups") or [])
            if isinstance(s, Mapping) and s.get("value") is not None
        )
        lines = tuple(
            f if isinstance(f, str) else str(f.get("text") or f.get("message") or f)
            for f in (m.get("findings") or [])
        )
        distrust = tuple(f for f in lines if f.startswith(DISTRUST_PREFIXES))
        # a finding the distrust line already quotes (whole, or its first clause: the contention note)
        # is said once; a time not believed makes the roofline's numbers meaningless (m25: "memory-bound
        # at 8%" of a contended reading); a faster baseline contradicts the at-the-ceiling finding's
        # "only less work helps" (goal.j2 says the baseline is faster instead)
        slower = any(s.value < 1 for s in speedups)
        findings = tuple(f for f in lines if not _quoted(f, distrust)
                         and not (distrust and roofline_finding(f)) and not (slower and ceiling_finding(f)))
        verdict = data.get("verdict") or ""
        return cls(
            verdict=str(getattr(verdict, "value", verdict)),
            check=data.get("check"),
            items=items,
            median_ms=m.get("median_ms"),
            speedups=speedups,
            # shown where known, marked when the time it comes from is not believed (queue round 4: the
            # timed-shape line promised a roofline that a contended run never showed); the goal derives
            # no "at most Nx faster" from such a reading
            roofline_fraction=m.get("roofline_fraction"),
            bound=m.get("bound"),
            findings=findings,
            distrust=distrust,
        )


def _quoted(finding: str, distrust: Sequence[str]) -> bool:
    """Whether a ``distrust`` line already says ``finding``: whole, or its
    first clause (the contention note is quoted by the untrusted-timing line
    up to its first ``;``)."""
    head = re.split(r"; |\. ", finding, maxsplit=1)[0]
    return any(finding in d or (len(head) > 20 and head in d) for d in distrust)


@dataclass(frozen=True)
class PromptContext:
    """Everything a prompt is made of.

    Attributes
    ----------
    task:
        The public :class:`TaskContract`.
    backend:
        Backend name, e.g. ``"tvm-llvm"``.
    level:
        The level to edit.
    sources:
        The current candidate's sources ``{level: text}``.
    role:
        ``single`` (any level) or the level agent's name (must equal ``level``).
    feedback:
        :class:`Feedback` on the current candidate.
    hardware:
        The target's specification (:func:`kstrata.agents.knowledge.spec_for_backend`).
    integrity_rules:
        Rules stated to the model; None: :func:`integrity_rules` of the backend.
    language:
        Fence language of the edited level's text.
    level_notes:
        What each level's text is for this backend (one short paragraph each).
    history:
        One line per earlier attempt from this candidate (what was tried, verdict).
    summary_lines:
        Other levels longer than this are shown as head and tail.
    languages:
        Fence language per level (default: ``language`` for the edited level,
        ``python`` for the others).
    timed_shape:
        The shape timings were taken at (``None``: nothing timed yet).
    timed_work:
        ``{"flops", "bytes"}`` of one call at ``timed_shape`` (those known).
    timing:
        Whether timings mean anything on this backend (an interpreter: no).
    timing_note:
        Why not, when ``timing`` is false.
    api:
        The API sheet for the edited level (:func:`api_sheet`).
    toolchain:
        The toolchain and its version (:func:`toolchain`).
    decline:
        Whether the answer may decline (the hierarchical roles).
    other_roles:
        Levels another agent can edit on this candidate (named in the request format).
    last_failure:
        The model's own last failed answer for this candidate and level
        (:func:`kstrata.agents.run_history.last_failure`), or None.
    goal:
        What to aim for next, stated from :func:`kstrata.agents.run_history.goal_facts`
        (correct or not, this candidate's reading and its trust, the run's
        best, the roofline gap), or None (not evaluated: no goal section).
    requests:
        Cross-level requests for this level that nothing has served yet
        (:func:`kstrata.agents.router.pending_requests`: ``{"level", "text",
        "role", "kind", "diagnosis"}``), shown until a change here serves them.
    earlier:
        What came of the earlier expansions of this candidate, when it is
        asked about again (:func:`kstrata.agents.run_history.earlier_answers`:
        children with their outcomes and full rationales, declines with
        their diagnoses); the prompt asks for something different, or a decline.

    Raises
    ------
    TypeError, ValueError
        On a field of the wrong type (e.g. raw dicts where a TaskContract or
        Feedback is expected), an unknown role or level.
    """

    task: TaskContract
    backend: str
    level: str
    sources: Mapping[str, str]
    role: str = "single"
    feedback: Feedback = field(default_factory=Feedback)
    hardware: Mapping[str, Any] | None = None
    integrity_rules: tuple[str, ...] | None = None
    language: str = "python"
    level_notes: Mapping[str, str] = field(default_factory=dict)
    history: tuple[str, ...] = ()
    summary_lines: int = 60
    languages: Mapping[str, str] = field(default_factory=dict)
    timed_shape: Mapping[str, int] | None = None
    timed_work: Mapping[str, float] = field(default_factory=dict)
    timing: bool = True
    timing_note: str = ""
    api: str = ""
    toolchain: str = ""
    decline: bool = False
    other_roles: tuple[str, ...] = ()
    last_failure: Mapping[str, Any] | None = None
    goal: Mapping[str, Any] | None = None
    requests: tuple[Mapping[str, Any], ...] = ()
    earlier: tuple[Mapping[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.task, TaskContract):
            raise TypeError("task must be a TaskContract (use TaskContract.from_task)")
        if not isinstance(self.feedback, Feedback):
            raise TypeError("feedback must be a Feedback (use Feedback.from_json)")
        if self.role not in ROLES:
            raise ValueError(f"unknown role {self.role!r}; expected one of {ROLES}")
        if self.level not in LEVELS:
            raise ValueError(f"unknown level {self.level!r}; expected one of {LEVELS}")
        if self.role != "single" and self.role != self.level:
            raise ValueError(f"the {self.role} agent edits the {self.role} level, not {self.level}")
        bad = [k for k, v in self.sources.items() if k not in LEVELS or not isinstance(v, str)]
        if bad:
            raise ValueError(f"sources must map levels {LEVELS} to text; bad keys: {bad}")


def summarize(text: str, max_lines: int) -> dict[str, Any]:
    """``{"body", "omitted"}``: ``text`` if short, else its head and tail."""
    lines = text.splitlines()
    if len(lines) <= max_lines:
        return {"body": text, "omitted": 0}
    head, tail = lines[: max_lines * 2 // 3], lines[-(max_lines // 3) :]
    omitted = len(lines) - len(head) - len(tail)
    return {"body": "\n".join(head + [f"... ({omitted} lines omitted) ..."] + tail), "omitted": omitted}


def header_only(text: str, most: int = 6) -> dict[str, Any]:
    """``{"body", "omitted"}`` of a generated level a change here drops (TVM's
    ``source``): its leading comment lines (``;``, ``//``, ``#``: target,
    shape, plan), at most ``most``, the rest omitted. Queue round rt63
    (rmsnorm on tvm-llvm): the graph prompt showed the first 40 of 2183 lines
    of LLVM IR, all string constants of TVM's argument checks."""
    lines = text.splitlines()
    head = []
    for line in lines[:most]:
        if not line.lstrip().startswith((";", "//", "#")):
            break
        head.append(line)
    omitted = len(lines) - len(head)
    # the count stands in the body; the heading's "N lines omitted" is left out (0), not said twice
    return {"body": "\n".join(head + ([f"... ({omitted} lines of generated code omitted) ..."] if omitted else [])),
            "omitted": 0}


def _shape(shape: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in shape.items()) or "(fixed)"


def _amount(value: float) -> str:
    """``value`` with an SI prefix and a trailing space, e.g. ``"8.39 M"``."""
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}"
    return f"{value:.3g} "


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The template environment (strict: an undefined variable is an error)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(PROMPTS),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["shape"] = _shape
    env.filters["amount"] = _amount
    return env


def _variables(ctx: PromptContext) -> dict[str, Any]:
    hw = dict(ctx.hardware or {})
    name = str(hw.pop("name", "") or "the target device")
    hw.pop("source", None)
    langs = {lv: ctx.languages.get(lv, ctx.language if lv == ctx.level else "python") for lv in LEVELS}
    langs[ctx.level] = ctx.language
    timed = dict(ctx.timed_shape) if ctx.timed_shape else {}
    return {
        "task": ctx.task,
        "backend": ctx.backend,
        "level": ctx.level,
        "role": ctx.role,
        "language": ctx.language,
        "languages": langs,
        "timed_shape": timed,
        "timed_is_nominal": timed == dict(ctx.task.nominal_shape),
        "timed_work": dict(ctx.timed_work),
        "timing": ctx.timing,
        "timing_note": ctx.timing_note,
        # the GPU an untimed (interpreted) kernel is meant for (queue round 4: "the GPU it is meant for", unnamed)
        "gpu": "" if ctx.timing else gpu_target(short=True),
        "gpu_target": "" if ctx.timing else gpu_target(),
        "api": ctx.api,
        "toolchain": ctx.toolchain,
        "decline": ctx.decline,
        "example": answer_example(ctx.backend, ctx.level),
        "other_roles": [lv for lv in ctx.other_roles if lv != ctx.level],
        # a located item's level is named only where an agent can edit it (a verifier tag at a
        # level that cannot be edited, e.g. TVM's generated source, would send the model nowhere)
        "editable": [ctx.level, *ctx.other_roles] if ctx.decline or ctx.other_roles else list(LEVELS),
        "current": ctx.sources.get(ctx.level, ""),
        "tune_note": tune_note(ctx.backend, ctx.sources.get(ctx.level, "")),
        # a level generated from this one (TVM's source): what runs now, dropped by a change here
        "stale": list(derived_below(ctx.backend, ctx.level)),
        "other_levels": [
            (lvl, header_only(text) if lvl in derived_below(ctx.backend, ctx.level)
             else summarize(text, ctx.summary_lines))
            for lvl, text in ctx.sources.items()
            if lvl != ctx.level and text.strip()
        ],
        "level_notes": dict(ctx.level_notes),
        # the PrimFuncs the schedule names: a graph change has the schedule replayed by those names (TVM)
        "scheduled_funcs": _SCHEDULED.findall(ctx.sources.get("schedule", "") or "")
        if ctx.level == "graph" and ctx.backend.startswith("tvm-") else [],
        "feedback": ctx.feedback,
        "history": ctx.history,
        "last_failure": dict(ctx.last_failure) if ctx.last_failure else None,
        "goal": dict(ctx.goal) if ctx.goal else None,
        "requests": [dict(r) for r in ctx.requests],
        # settled: a correct child or a decline (asked again, only another idea is new; a failed
        # answer is fixed instead: queue round 4 read "propose something different" beside "fix it")
        "earlier": [{**e, "settled": e.get("kind") in ("decline", "duplicate")
                     or str(e.get("outcome", "")).startswith("correct")}
                    for e in ctx.earlier if e.get("level") == ctx.level or not _shown_as_request(e, ctx.requests)],
        "hardware_name": name,
        "hardware_lines": [(k, _flat(v)) for k, v in hw.items()],
        "integrity_rules": (
            ctx.integrity_rules if ctx.integrity_rules is not None else integrity_rules(ctx.backend)
        ),
    }


#: a schedule function of the TVM schedule text: ``def schedule_<primfunc>(sch):``
_SCHEDULED = re.compile(r"^def schedule_(\w+)\(", re.MULTILINE)


def _shown_as_request(entry: Mapping[str, str], requests: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``entry`` (an :attr:`PromptContext.earlier` decline) is the
    decline an open request of the prompt comes from: the request section
    shows its diagnosis and what it asked already (queue round 3: one decline
    was said three times in a prompt)."""
    made = entry.get("expansion")
    return entry.get("kind") == "decline" and bool(made) and any(
        r.get("kind") == "decline" and str(r.get("expansion")) == made for r in requests)


#: what a ``# kstrata-tune:`` marker in a Triton kernel is (:mod:`kstrata.backends.triton.tune_rules`)
TUNE_NOTE = ("`# kstrata-tune: {...}` after a module-level integer constant marks it as a tunable of kstrata's "
             "built-in Triton autotuner (`--proposer builtin`), which makes candidates that only change that value "
             "to one of the listed choices (`... if NAME`: only while the marked constant NAME is non-zero); no "
             "tuner runs while a model answers, and the verifier ignores the markers. You may change these "
             "constants, and keep, edit or drop the markers.")


def tune_note(backend: str, text: str) -> str:
    """:data:`TUNE_NOTE` when ``text`` (a Triton candidate's source) has a
    ``# kstrata-tune:`` marker, else ``""``."""
    return TUNE_NOTE if backend.split("-")[0] == "triton" and "# kstrata-tune:" in text else ""


def _flat(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def build_prompt(ctx: PromptContext) -> list[dict[str, str]]:
    """The chat messages for ``ctx``: a system message and a user message.

    Raises
    ------
    jinja2.TemplateError
        When a template is broken (a bug in kstrata's data files).
    """
    env = environment()
    v = _variables(ctx)
    system = env.get_template("system.j2").render(v).strip()
    user = env.get_template(f"{ctx.role}.j2").render(v).strip()
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def retry_messages(
    messages: Sequence[Message], answer: str, feedback: str, level: str, decline: bool = False,
    other_roles: Sequence[str] = (),
) -> list[dict[str, str]]:
    """``messages`` plus the unusable ``answer`` and a user turn with the
    parse ``feedback`` (:attr:`kstrata.agents.parse.ParseError.feedback`);
    ``decline``: remind the model that it may decline instead of sending code,
    with a cross-level request only where ``other_roles`` (the levels another
    agent can edit, as in the first prompt) has one."""
    text = environment().get_template("retry.j2").render(
        feedback=feedback, level=level, decline=decline, other_roles=[r for r in other_roles if r != level]).strip()
    return [
        *({"role": m["role"], "content": m["content"]} for m in messages),
        {"role": "assistant", "content": answer},
        {"role": "user", "content": text},
    ]


def last_call_messages(messages: Sequence[Message], level: str, decline: bool = False) -> list[dict[str, str]]:
    """``messages`` with a note on their last (user) turn that no format
    retry can follow this answer: the run's call budget ends with it (queue
    rounds rt63, rt66: an edit whose SEARCH text did not occur, sent on a
    run's last call, was recorded unusable and no retry prompt came, since a
    retry is a call and the budget is a hard limit)."""
    out = [{"role": m["role"], "content": m["content"]} for m in messages]
    note = environment().get_template("last_call.j2").render(level=level, decline=decline).strip()
    out[-1]["content"] = out[-1]["content"].rstrip("\n") + "\n\n" + note + "\n"
    return out
