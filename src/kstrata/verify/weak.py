"""Weak-test guard: would an all-zero, constant or input-independent output
pass a task's checks? If so its test inputs are too weak (KernelBench accepted
all-zero outputs on 4 of 60 level-1 problems).

:func:`weak_fakes` is the guard ``kstrata tasks check`` runs; the judge calls
:func:`weak_match` on a candidate's outputs to mark a correct verdict weak
when the candidate *is* such a fake, and :func:`strengthening_draws` names
input draws that would make a weak task's tests stronger."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence

import torch

from kstrata.tasks.base import Task
from kstrata.tasks.inputs import apply_distribution, seed_all
from kstrata.tasks.meta import DEFAULT_DISTRIBUTIONS, Tolerance
from kstrata.verify.plan import hidden_tests, public_tests
from kstrata.verify.runner import flatten
from kstrata.verify.tolerance import agree, compare

FAKES = ("zeros", "constant", "other_seed", "input")
#: Not an output but a property of the task: a weight of two or more dimensions
#: whose elements are all equal whatever the parameter seed (:func:`constant_weights`).
CONSTANT_WEIGHTS = "constant_weights"


def constant_weights(task: Task) -> list[str]:
    """Names of the reference's floating parameters and buffers with two or
    more dimensions whose elements are all one value, at two parameter seeds
    (``nn.init.constant_(fc.weight, 0.01)``, ``zeros_``): a kernel may use
    that value instead of the weights (a row sum for the matrix product read
    correct and 2.3x faster, red-team round 3), and no input draw tells it
    apart. One-dimensional ones (a norm's default affine, a zero bias) are
    left out: common, and cheap next to the op they scale. Empty when the
    task cannot be built at its first small (else nominal) shape.

    Also named: such parameters (not buffers: a causal mask is the task's)
    that are the same at both seeds without being one value
    (``nn.init.eye_``, a fixed pattern): every test builds the
    Model with them, so a kernel that never reads them (``return x`` for an
    identity-initialised linear layer read correct and 1.79x faster,
    red-team round of 2026-12-03) is right on every test too."""
    shape = task.small_shapes[0] if task.small_shapes else task.nominal_shape
    found: set[str] | None = None
    first: dict[str, torch.Tensor] = {}
    same: set[str] = set()
    for seed in (0, 1):
        try:
            model = task.instantiate(shape, seed, inputs=False)[0]
        except Exception:  # noqa: BLE001 - a task that does not build is reported elsewhere
            return []
        named = [(n, p.detach()) for n, p in [*model.named_parameters(), *model.named_buffers()]
                 if p.dim() >= 2 and p.numel() > 1 and p.is_floating_point()]
        const = {n for n, p in named if bool((p == p.reshape(-1)[0]).all())}
        found = const if found is None else found & const
        if seed == 0:
            first = {n: p.clone() for n, p in named}
        else:
            # learned weights only: a fixed buffer (a causal mask) is part of the task
            params = {n for n, _ in model.named_parameters()}
            same = {n for n, p in named if n in params and n in first and first[n].shape == p.shape
                    and torch.equal(first[n], p)}
    return sorted((found or set()) | same)


def weak_fakes(task: Task, secret: str = "weak-test-guard", scope: str = "small") -> list[str]:
    """Names of fake outputs (:data:`FAKES`) that pass *every* test of ``task``.

    ``zeros``: all-zero output; ``constant``: the oracle's mean everywhere;
    ``other_seed``: the correct output for another seed's inputs (an
    input-independent answer); ``input``: each output an input of its shape
    as given (:func:`_input_fake`: an identity, a scale whose one-dimensional
    weights are ones and zeros at every seed, which :func:`constant_weights`
    leaves out; ``x.clone()`` read correct and ranked 1.2x faster there,
    red-team rt58). An empty list means the tests are strong.
    :data:`CONSTANT_WEIGHTS` is added when the task's weights are degenerate
    (:func:`constant_weights`), whatever the fakes do.
    """
    degenerate = [CONSTANT_WEIGHTS] if constant_weights(task) else []
    base = task.small_shapes if scope == "small" else task.sweep_shapes
    tests = public_tests(task) + hidden_tests(task, secret, base=base)
    passing = {f: True for f in FAKES}
    tol = task.meta.tolerance
    prev: dict[tuple, list[torch.Tensor]] = {}
    groups: dict[tuple, tuple] = {}
    for t in tests:
        key = (t.shape, t.param_seed)
        if key not in groups:
            model, _, _, module = task.instantiate(t.shape_dict, t.param_seed, inputs=False)
            groups = {key: (model, copy.deepcopy(model).double(), module)}
        model, model64, module = groups[key]
        seed_all(t.seed + 1)
        xs = apply_distribution(list(module.get_inputs()), t.dist, t.seed, task.meta.dist_inputs)
        with torch.no_grad():
            refs = flatten(model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in xs]))
            oracles = flatten(model64(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point()
                                        else x for x in xs]))
        fakes = {
            "zeros": [torch.zeros_like(r) for r in refs],
            "constant": [torch.full_like(r, float(o.double().mean()) if r.is_floating_point() else 0)
                         for r, o in zip(refs, oracles)],
        }
        ins = _input_fake(refs, xs)
        if ins is not None:
            fakes["input"] = ins
        else:
            passing["input"] = False
        if t.shape in prev:
            fakes["other_seed"] = prev[t.shape]
        prev[t.shape] = [r.clone() for r in refs]
        for name, outs in fakes.items():
            if passing[name] and not all(compare(f, o if r.is_floating_point() else r, r, tol).ok
                                         for f, o, r in zip(outs, oracles, refs)):
                passing[name] = False
        if not any(passing.values()):
            break
    return [f for f, ok in passing.items() if ok] + degenerate


def _input_fake(refs: Sequence[torch.Tensor], inputs: Sequence[object]) -> list[torch.Tensor] | None:
    """For each reference output, the first contiguous input tensor of its shape, in its dtype
    (the output of a kernel that returns its input); None when some output has none. A
    strided input is left out: laying it out densely is a copy task's work."""
    out = []
    for r in refs:
        x = next((x for x in inputs if isinstance(x, torch.Tensor) and x.shape == r.shape and x.is_contiguous()
                  and x.is_floating_point() == r.is_floating_point()), None)
        if x is None:
            return None
        out.append(x.detach().to(r.dtype))
    return out


def fakes_under_dtype_atol(task: Task, secret: str = "weak-test-guard", scope: str = "small") -> list[str]:
    """The fakes (:data:`FAKES`) that would pass every test of ``task`` under
    its dtype's *fixed* absolute tolerance
    (:data:`kstrata.verify.tolerance.DTYPE_BOUNDS`), as evaluators with a
    plain ``atol`` compare: its draws give only outputs near or below that
    ``atol`` (case 01's narrow task: a softmax over 262144 columns of
    ``torch.rand``, where the row mean everywhere passed). kstrata's own
    comparison scales the ``atol`` to the outputs
    (:func:`kstrata.verify.tolerance.output_scale`) and rejects them, but the
    task still tests only tiny outputs; its author should add a draw with
    outputs of order one. Empty for a task that sets its own ``atol`` (used
    as given) or has no such bound."""
    from kstrata.verify.tolerance import DTYPE_BOUNDS

    tol = task.meta.tolerance
    if tol.kind != "oracle" or tol.atol is not None:
        return []
    bound = DTYPE_BOUNDS.get(getattr(torch, task.meta.dtype, None))
    if bound is None:
        return []
    fixed = tol.model_copy(update={"atol": bound[0]})
    trial = dataclasses.replace(task, meta=task.meta.model_copy(update={"tolerance": fixed}))
    return weak_fakes(trial, secret, scope)


def weak_match(fakes: Sequence[str], outputs: Sequence[torch.Tensor], refs: Sequence[torch.Tensor],
               tol: Tolerance, prev_outputs: Sequence[torch.Tensor] | None = None,
               inputs: Sequence[object] | None = None) -> str | None:
    """Which fake a candidate's outputs match, on a task whose tests that fake passes.

    Called by the judge on a *passing* test: when the task is weak
    (``fakes``, from :func:`weak_fakes`, is not empty) a correct verdict does
    not tell a real kernel from a no-op, so a candidate whose output *is*
    one of those fakes gets a verdict marked weak (evidence
    ``weak_match: <name>``) and its speedup is excluded from the metrics
    (:func:`kstrata.bench.metrics.excluded_reason`).

    Parameters
    ----------
    fakes:
        Names from :data:`FAKES` that pass every test of the task.
    outputs:
        The candidate's outputs on one test (CPU or device tensors).
    refs:
        The reference's outputs on the same test (dtype and shape).
    tol:
        The task's tolerance policy (two outputs "match" when they agree up to
        its dtype bound, :func:`kstrata.verify.tolerance.agree`).
    prev_outputs:
        The candidate's outputs on an earlier test of the same shape with
        other inputs (another seed or draw), for ``other_seed``.
    inputs:
        The test's inputs as the candidate got them (CPU tensors and other values), for ``input``.

    Returns
    -------
    str | None
        ``"zeros"`` (every output is ~0), ``"constant"`` (every output is one
        value throughout), ``"other_seed"`` (same outputs as for other
        inputs: input-independent), checked in that order, only among
        ``fakes``; then :data:`CONSTANT_WEIGHTS` for any other output when
        ``fakes`` holds it (the tests cannot tell the weights' work from a
        shortcut that uses their one value); then ``"input"`` (each output an
        input of its shape, ``inputs``); ``None`` when the output matches none
        of them or the task is strong.
    """
    if not fakes:
        return None
    pairs = [(o.detach().cpu(), r.detach().cpu()) for o, r in zip(outputs, refs)
             if isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor)]
    if not pairs:
        return None
    if "zeros" in fakes and all(agree(o, torch.zeros_like(o), r.dtype, tol) for o, r in pairs):
        return "zeros"
    if "constant" in fakes and all(
            o.numel() == 0 or agree(o, torch.full_like(o, o.reshape(-1)[0].item()), r.dtype, tol)
            for o, r in pairs):
        return "constant"
    if "other_seed" in fakes and prev_outputs is not None and len(prev_outputs) == len(pairs) and all(
            p.shape == o.shape and agree(o, p.detach().cpu(), r.dtype, tol)
            for (o, r), p in zip(pairs, prev_outputs)):
        return "other_seed"
    if CONSTANT_WEIGHTS in fakes:  # names the weights: the more telling of the two for an identity init
        return CONSTANT_WEIGHTS
    if "input" in fakes and inputs is not None:
        ins = _input_fake([r for _, r in pairs], [x.detach().cpu() if isinstance(x, torch.Tensor) else x
                                                  for x in inputs])
        if ins is not None and all(agree(o, x, r.dtype, tol) for (o, r), x in zip(pairs, ins)):
            return "input"
    return None


def strengthening_draws(task: Task, secret: str = "weak-test-guard", scope: str = "small") -> list[str]:
    """Input distributions the task does not list that would make its tests
    reject a fake that passes them now (issue #17 item 6: "strengthen such
    tasks with input draws that make the output depend on the inputs").

    For each distribution of :data:`kstrata.tasks.meta.DEFAULT_DISTRIBUTIONS` missing
    from ``task.meta.distributions``, the weak guard is re-run with the
    task's first distribution plus that one; a distribution is returned when
    fewer fakes pass with it and the reference stays inside the task's
    numerical domain (:func:`kstrata.verify.domain.outside_domain`) on it.
    The judge may add them to the hidden draws. Empty when the task is
    strong, or when no draw helps (a task whose output ignores its inputs,
    case 18_zero_init_weights).
    """
    from kstrata.verify.domain import outside_domain

    weak = weak_fakes(task, secret, scope)
    if not weak:
        return []
    out = []
    first = task.meta.distributions[0]
    for dist in DEFAULT_DISTRIBUTIONS:  # not the opt-in nonfinite: a contract the task chooses
        if dist in task.meta.distributions:
            continue
        trial = dataclasses.replace(task, meta=task.meta.model_copy(update={"distributions": (first, dist)}))
        if len(weak_fakes(trial, secret, scope)) >= len(weak):
            continue
        shape = (task.small_shapes if scope == "small" else task.sweep_shapes)[0]
        model, _, _, module = task.instantiate(shape, 0, inputs=False)
        seed_all(1)
        xs = apply_distribution(list(module.get_inputs()), dist, 0, task.meta.dist_inputs)
        with torch.no_grad():
            refs = flatten(model(*xs))
            oracles = flatten(copy.deepcopy(model).double()(
                *[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in xs]))
        if outside_domain(refs, oracles, task.meta.tolerance) is None:
            out.append(dist)
    return out
