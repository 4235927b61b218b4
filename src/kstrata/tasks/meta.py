"""Task metadata: the typed schema of a task's ``KSTRATA`` dict or sidecar TOML.

A KernelBench-format module sets its sizes as module globals (``batch_size = 16``)
that ``get_inputs()`` reads at call time. kstrata names those globals as *shape
variables*: a shape is a mapping ``{variable: int}`` that is written into the
module before ``get_inputs()``/``get_init_inputs()`` are called, so one file
serves its nominal shape, a small test shape set and a boundary-shape sweep.

Example (inside a task module)::

    KSTRATA = {
        "level": 1, "category": "norm", "dtype": "float32",
        "shapes": {"nominal": {"B": 4096, "D": 4096},
                   "small": [{"B": 7, "D": 33}],
                   "sweep": [{"B": 1, "D": 4096}, {"B": 127, "D": 1001}]},
        "flops": "5*B*D", "bytes": "8*B*D",
    }
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kstrata.tasks.formula import check_formula

#: The input distributions a task gets when its metadata lists none (see
#: :mod:`kstrata.tasks.inputs` for their exact definitions). "normal" is the
#: task's own ``get_inputs()`` draw.
DEFAULT_DISTRIBUTIONS = (
    "normal",
    "uniform",
    "heavy_tailed",
    "large",
    "near_zero",
    "shifted",
    "positive",
    "grid",
    "offset",
    "ties",
)
#: Every input distribution known to the verifier: the defaults, the
#: opt-in ``nonfinite`` (NaN and infinities among the normal draw), which a
#: task lists when NaN/Inf propagation is part of its contract (PyTorch's
#: ``relu`` returns NaN for NaN; a kernel using IEEE ``max(x, 0)`` returns 0,
#: so it is not a default: the shipped relu kernels would read incorrect),
#: and ``outliers`` (values far outside an int8/int16 range among the normal
#: draw), which every quantization task gets (:data:`QUANTIZE_DRAWS`),
#: and ``far`` (rows beyond any finite padding sentinel), which every task that reduces its
#: inputs gets (:data:`FAR_CATEGORIES`).
DISTRIBUTIONS = (*DEFAULT_DISTRIBUTIONS, "nonfinite", "outliers", "far")
#: Draws every quantization task gets, whatever its metadata lists
#: (:meth:`TaskMeta.quantizes`): values far outside the representable range,
#: so that a clamp after a narrowing cast (a wrap-around) or an integer
#: overflow shows. A quantize kernel that cast to int16 before its clamp read
#: correct on every draw a task listed (no |x| reached the 645 that wraps at
#: scale 2.5/127; red-team 2026-12-04). The one-signed draws ``positive`` and
#: ``shifted`` are there for a range computed from a minimum or maximum
#: started at 0.0, or an absmax taken without the absolute value, which a
#: mixed-sign draw hides (red-team 2026-12-04, case rt48).
QUANTIZE_DRAWS = ("outliers", "positive", "shifted")
#: Categories whose reference reduces its inputs as drawn (a maximum, minimum,
#: sum or mean over them): every such task gets the one-signed draws
#: ``positive`` and ``shifted``, whatever its metadata lists. A row maximum
#: started at 0.0 is right on any draw with a positive value in each row, and a
#: task that listed its own draws without them (a softmax with ``normal``,
#: ``uniform``, ``near_zero``) let it read correct (red-team 2026-12-05; the
#: defaults have both since rt48). A task whose inputs pass through a GEMM
#: with signed weights first (attention, MLP) keeps its list: its one-signed
#: draw does not reach a one-signed intermediate.
ONE_SIGNED_CATEGORIES = ("reduction", "norm", "softmax", "pooling", "scan", "loss")
ONE_SIGNED_DRAWS = ("positive", "shifted")
#: Categories whose kernels take a maximum or minimum over the inputs as drawn, where a padding
#: sentinel or a running maximum's start hides: every such task gets the ``far`` draw (every row
#: beyond -1e4 or +1e4), listed or not. A softmax or row maximum padded with a finite sentinel
#: (-1e4, BERT's mask value) instead of -inf passed every other draw (red-team rt54). Norms are
#: left out: a norm has no maximum, and rows whose mean is 1e5 or more times their spread cancel
#: in any float32 mean (the shipped Triton layernorm failed there where PyTorch's CPU one did not).
FAR_CATEGORIES = ("reduction", "softmax", "pooling", "scan", "loss")
#: one line per distribution, in a prompt's words (the table of :mod:`kstrata.tasks.inputs`, shortened): what a kernel author
#: must handle; a test names the draw it failed on by these names
DRAW_SUMMARY = {
    "normal": "the task's own draw (usually randn)",
    "uniform": "U(-1, 1)",
    "heavy_tailed": "Student-t (3 degrees of freedom): rare huge values, the extremes at the first and last elements",
    "large": "the normal draw times 100 (overflow in exp or accumulators)",
    "near_zero": "the normal draw times 1e-3 (division and epsilon handling); hidden tests also set some rows "
                 "to exactly zero (an all-zero row must give what the reference gives there)",
    "shifted": "the normal draw minus 10 (all-negative logits: padding such as other=0.0 dominates a max or sum)",
    "positive": "the normal draw's absolute value plus 1 (all-positive: a minimum started at 0.0 wins)",
    "grid": "multiples of 1/64 in [-1, 1]: exact sums, so a reduction's rounding allowance is zero",
    "offset": "the normal draw +-1000 by row (one-pass variance cancels; padding near zero loses)",
    "ties": "constant rows and columns at the draw's maximum, and ties at the maximum in every other row",
    "outliers": "a few elements +-10^1..10^9 (casting before clamping overflows integer types)",
    "nonfinite": "a few elements NaN, +inf and -inf (they must propagate as in PyTorch)",
    "far": "every row moved by -10^e (even seeds) or +10^e (odd), e from 4 to 5 in every other row and up to "
           "the dtype's range in the rest: a finite padding sentinel such as -1e4 in place of -inf loses to the "
           "real values (errors of the inputs' own rounding at that size are allowed)",
}

Dtype = Literal["float32", "float16", "bfloat16", "float64", "int8", "int32", "int64"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Shapes(_Strict):
    """Shape sets of a task. Each shape maps shape-variable names to ints.

    ``nominal`` is the benchmark shape (timed); ``small`` are shapes whose
    reference runs in well under a second on a 2-core CPU (tests, public stage);
    ``sweep`` are boundary shapes (1, primes, non-multiples of 2, large) used by
    the hidden verification stage.
    """

    nominal: dict[str, int] = Field(default_factory=dict)
    small: list[dict[str, int]] = Field(default_factory=list)
    sweep: list[dict[str, int]] = Field(default_factory=list)

    @field_validator("small", "sweep")
    @classmethod
    def _same_keys(cls, v: list[dict[str, int]], info: Any) -> list[dict[str, int]]:
        for shape in v:
            for name, size in shape.items():
                if size < 0:
                    raise ValueError(f"shape variable {name!r} must be >= 0, got {size}")
        return v

    @model_validator(mode="after")
    def _variables_of_nominal(self) -> "Shapes":
        # a small or sweep shape may leave variables out (full_shape takes them from nominal), never add
        # one nominal lacks: nominal {B, N} with sweep {B, D} was reported as the flops formula's D
        # (newcomer nc14), where the shapes were the mistake
        known = set(self.nominal)
        if not known:
            return self
        for field in ("small", "sweep"):
            for i, shape in enumerate(getattr(self, field)):
                extra = sorted(set(shape) - known)
                if extra:
                    raise ValueError(f"shapes.{field}[{i}] {shape} names {extra}, which shapes.nominal "
                                     f"{self.nominal} does not; every shape uses nominal's variables "
                                     f"({sorted(known)})")
        return self


class Tolerance(_Strict):
    """Correctness tolerance policy.

    ``kind="oracle"`` (default): the candidate's error against the float64 oracle
    may not exceed ``max(floor, k * native_err) + dtype_bound`` elementwise in the
    max-norm sense, where ``native_err`` is the reference's own error in the task
    dtype. ``atol``/``rtol`` override the dtype bound when given.

    ``kind="quant"``: distribution metrics against the oracle, as KernelBenchX
    scores quantized kernels: cosine similarity >= ``cosine``, relative L1
    error <= ``rel_l1`` and RMSE (relative to the oracle's RMS) <= ``rmse``.

    ``kind="exact"``: outputs must be equal (integer outputs, argmax, indices).

    ``reductions`` (``oracle`` only): a test that fails the bound above is
    compared again with the allowance of the reference's reductions computed
    in another order added (:mod:`kstrata.verify.tolerance_reduction`);
    False turns that off.
    """

    # each bound a finite number >= 0 (a cosine at most 1): a negative atol made every output of every
    # candidate wrong (an honest one read "rejected ... max error 0"), 1e999 (inf, a literal the KSTRATA
    # dict takes) let any output pass (red-team rt59)
    kind: Literal["oracle", "quant", "exact"] = "oracle"
    reductions: bool = True
    k: float = Field(4.0, ge=0, allow_inf_nan=False)
    floor: float | None = Field(None, ge=0, allow_inf_nan=False)
    atol: float | None = Field(None, ge=0, allow_inf_nan=False)
    rtol: float | None = Field(None, ge=0, allow_inf_nan=False)
    cosine: float = Field(0.95, ge=0, le=1, allow_inf_nan=False)
    rel_l1: float = Field(0.05, ge=0, allow_inf_nan=False)
    rmse: float = Field(0.10, ge=0, allow_inf_nan=False)


class Precision(_Strict):
    """Which precision shortcuts a candidate may take."""

    allow_tf32: bool = False
    allow_reduced_precision: bool = False


class TaskMeta(_Strict):
    """All metadata of a task; every field has a default, so a plain KernelBench
    file (no metadata) is a valid task.

    Raises
    ------
    pydantic.ValidationError
        On unknown keys, wrong types, or a FLOP/byte formula that is not plain
        arithmetic over shape-variable names.
    """

    level: Literal[1, 2, 3] = 1
    category: str = "uncategorized"
    dtype: Dtype = "float32"
    description: str = ""
    shapes: Shapes = Field(default_factory=Shapes)
    distributions: tuple[str, ...] = DEFAULT_DISTRIBUTIONS
    #: indices into ``get_inputs()`` that distributions apply to; None = every
    #: floating-point input.
    dist_inputs: tuple[int, ...] | None = None
    #: indices into ``get_inputs()`` of Python ints that are free parameters of the task (a zero
    #: point, a shift): hidden tests move them as they move one-valued integer tensors
    #: (:mod:`kstrata.verify.free_ints`). A Python int is otherwise left as it is (a ``dim``).
    free_inputs: tuple[int, ...] = ()
    #: indices into ``get_inputs()`` whose one value is part of the task's definition (a format
    #: constant): hidden tests never move them (:func:`kstrata.tasks.inputs.vary_scalars`).
    fixed_inputs: tuple[int, ...] = ()
    tolerance: Tolerance = Field(default_factory=Tolerance)
    precision: Precision = Field(default_factory=Precision)
    #: FLOP count of one forward call, as a formula over shape variables.
    flops: str | None = None
    #: minimum DRAM traffic (bytes) of one forward call, as a formula.
    bytes: str | None = None
    tags: tuple[str, ...] = ()

    @field_validator("distributions")
    @classmethod
    def _known_dists(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [d for d in v if d not in DISTRIBUTIONS]
        if bad:
            raise ValueError(f"unknown distribution(s) {bad}; expected a subset of {DISTRIBUTIONS}")
        if "normal" not in v:
            raise ValueError("distributions must include 'normal' (the task's own draw)")
        return v

    @model_validator(mode="after")
    def _grid_only_where_ties_are_harmless(self) -> "TaskMeta":
        # "grid" draws few distinct values, so ties are common: an argmax or a rounding to
        # integers (policies exact and quant) may break them either way and stay correct.
        # The default list leaves it out there; a task that lists it keeps it.
        if "distributions" not in self.model_fields_set and self.tolerance.kind != "oracle":
            object.__setattr__(self, "distributions", tuple(d for d in self.distributions if d != "grid"))
        return self

    def quantizes(self) -> bool:
        """Whether this is a quantization task: category ``quant`` or a tag
        ``quantize``/``fake_quant`` (a dequantization's inputs are integers,
        which no draw changes)."""
        tags = {t.lower().replace("-", "_") for t in self.tags}
        return self.category.lower().startswith("quant") or bool(tags & {"quantize", "fake_quant", "quantization"})

    @model_validator(mode="after")
    def _saturating_draws_for_quantization(self) -> "TaskMeta":
        # every quantization task draws values far outside the representable range, listed or not
        if self.quantizes() and self.dist_inputs != ():
            missing = tuple(d for d in QUANTIZE_DRAWS if d not in self.distributions)
            if missing:
                object.__setattr__(self, "distributions", (*self.distributions, *missing))
        return self

    @model_validator(mode="after")
    def _one_signed_draws_for_reductions(self) -> "TaskMeta":
        # a reduction over the inputs as drawn meets all-positive and all-negative rows, listed or not
        if self.category.lower() in ONE_SIGNED_CATEGORIES and self.dist_inputs != ():
            missing = tuple(d for d in ONE_SIGNED_DRAWS if d not in self.distributions)
            if missing:
                object.__setattr__(self, "distributions", (*self.distributions, *missing))
        if self.category.lower() in FAR_CATEGORIES and self.dist_inputs != () and "far" not in self.distributions:
            object.__setattr__(self, "distributions", (*self.distributions, "far"))
        return self

    @field_validator("flops", "bytes")
    @classmethod
    def _formula(cls, v: str | None) -> str | None:
        if v is not None:
            check_formula(v)
        return v

    @model_validator(mode="after")
    def _formula_vars(self) -> "TaskMeta":
        known = set(self.shapes.nominal)
        for field in ("flops", "bytes"):
            expr = getattr(self, field)
            if expr is None or not known:
                continue
            unknown = check_formula(expr) - known
            if unknown:
                raise ValueError(
                    f"{field} formula {expr!r} uses {', '.join(sorted(unknown))}, which shapes.nominal does not "
                    f"name (it names {', '.join(sorted(known))}): the formula's sizes are the shape variables, "
                    f"the keys of shapes.nominal, each a module global; add {', '.join(sorted(unknown))} there "
                    f"with its nominal value, or write the formula in the names it has"
                )
        return self


# -- metadata inferred for plain files (issue #23 item 1) -----------------------
#: Op kinds recognised in a task's source, in the order a level-1/3 task's
#: category is chosen (the first kind found wins): regular expressions over
#: the module's code with strings and comments removed.
OP_KINDS: tuple[tuple[str, str], ...] = (
    ("rnn", r"\bnn\.(LSTM|GRU|RNN)(Cell)?\b|\b(lstm|gru)\s*\("),
    ("attention", r"scaled_dot_product_attention|MultiheadAttention|\batt(n)?\b|[Aa]ttention|Transformer\w*Layer"),
    ("conv", r"\b(nn\.)?[Cc]onv(Transpose)?[123]d\b|\bconv(_transpose)?[123]d\s*\(|\bF\.conv"),
    ("matmul", r"\b(matmul|bmm|mm|addmm|baddbmm|einsum|linear|tensordot|mv|diag)\s*\(|nn\.(Linear|Bilinear)\b|@"),
    ("norm", r"\bnn\.\w*Norm\w*\b|\b(layer|batch|group|instance|rms|local_response)_norm\s*\(|\bnorm\s*\(|\bnormalize\s*\("),
    ("reduction", r"\b(sum|mean|amax|amin|max|min|argmax|argmin|prod|cumsum|cumprod|logsumexp|softmax|"
                  r"log_softmax|var|std|\w+_loss|cross_entropy|nll_loss|kl_div)\s*\(|nn\.\w*(Loss|Pool\w*|Softmax)\b|pool\w*\s*\("),
)


#: A module's code that quantizes: PyTorch's quantize ops, or a rounding and a cast to an integer dtype.
QUANTIZE_RX = (r"\b(quantize_per_tensor|quantize_per_channel|fake_quantize_per_\w+)\s*\(|"
               r"(?=[\s\S]*\bround\b)[\s\S]*\b(u?int8|int16|int32|qint8|quint8)\b")


def quantizes_source(source: str) -> bool:
    """Whether a task module's code quantizes (:data:`QUANTIZE_RX`); a plain
    file that does gets the tag ``quantize``, so its draws include
    :data:`QUANTIZE_DRAWS` (:func:`kstrata.tasks.loader.inferred_metadata`)."""
    import re

    return re.search(QUANTIZE_RX, _code_only(source)) is not None


def _code_only(source: str) -> str:
    """``source`` without comments, strings and docstrings (names and operators kept)."""
    import io
    import tokenize

    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type not in (tokenize.COMMENT, tokenize.STRING):
                out.append(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    import re

    return re.sub(r"\s*\.\s*", ".", " ".join(out))


def op_kinds(source: str) -> tuple[str, ...]:
    """The op kinds (:data:`OP_KINDS`) a task module's code uses, in priority
    order; ``("elementwise",)`` when none is recognised."""
    import re

    code = _code_only(source)
    found = tuple(kind for kind, rx in OP_KINDS if re.search(rx, code))
    return found or ("elementwise",)


def level_from_path(path: Any) -> int | None:
    """The KernelBench level a file's folder names (``.../level2/x.py`` -> 2), or None."""
    import re
    from pathlib import Path

    for part in reversed(Path(path).parent.parts):
        m = re.fullmatch(r"level[_-]?(\d+)", part.lower())
        if m:
            return int(m.group(1))
    return None


def inferred_category(source: str, level: int) -> str:
    """A category for a task without one: ``fusion`` for a level-2 file (a
    KernelBench level-2 problem is a sequence of fused ops) and for a level-1
    file that combines a heavy op (conv, matmul) with others, otherwise the
    first op kind it uses (:data:`OP_KINDS` order, ``elementwise`` when none)."""
    kinds = op_kinds(source)
    if level == 2:
        return "fusion"
    return kinds[0]
