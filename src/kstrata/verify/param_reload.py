"""The parameter-reload check: ``ModelNew`` is still right after its parameters are replaced.

Every other test compares a freshly constructed ``ModelNew``, built after the
same seed as the task's ``Model`` (so its parameters start equal). ``kstrata
export``'s ``KernelModule.from_model(model)`` builds ``ModelNew(*init_inputs)``
and then calls ``load_state_dict(model.state_dict())`` (strict) with a user's
trained weights (:mod:`kstrata.cli.export`, its ``_FILE`` template). A
``ModelNew`` that derived a tensor from its weights once in ``__init__`` (W1 and
W3 of a SwiGLU stacked into a plain attribute, a weight pre-transposed into a
non-persistent buffer) passed every test and returned silently wrong results
in the user's model (queue round rt82, ``benchmarks/results/agents_queue_rt82.txt``).

Here, once per verification, after the public stage passes, at the last
public shape (whose ``ModelNew``, built at that test's parameter seed A, is the
one loaded in the candidate process): the judge builds the task's ``Model`` at
another seed B (:func:`reload_seed`) in its own process, sends its
``state_dict`` to the candidate process (request ``reload``: the harness's
:meth:`kstrata.sandbox.child.Harness.reload` calls ``load_state_dict`` as the
export does), and makes one checked call on the test's public input, judged
against ``Model(seed B)``'s reference and oracle by :meth:`ShapeRun.judge` (the
usual comparison, :func:`kstrata.verify.tolerance.compare`).

Verdicts (check ``param_reload``): a wrong output is ``incorrect`` (the
candidate computes a wrong result for a valid ``Model`` state: an honest
mistake, not a way around the verifier, so no integrity check a preset could
turn into a warning); a ``load_state_dict`` that raises is ``runtime_error``
(the export's own call would raise). Backends: those whose export loads a
state_dict into ``ModelNew`` (:func:`loads_state_dict`); a TVM export runs its
compiled kernels on the user's ``Model``'s own tensors (``KernelModule``
passes ``model.named_parameters()``/``named_buffers()`` at the call), so
nothing of the candidate holds weights there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from kstrata.sandbox import wire
from kstrata.verdict import Verdict
from kstrata.verify import feedback as fb

if TYPE_CHECKING:
    from kstrata.verify.plan import TestCase
    from kstrata.verify.runner import Context, ShapeRun

#: Added to the public test's parameter seed for the ``Model`` whose weights are loaded (public: the
#: agent may know it; any seed other than the test's own gives other weights)
RELOAD_SEED_OFFSET = 7919

#: What a stale derived tensor is and what to do about it (the feedback's advice)
ADVICE = ("A tensor derived from the parameters once in __init__ (W1 and W3 stacked, a weight transposed or "
          "packed into a plain attribute or a non-persistent buffer) keeps the constructor's values when the "
          "parameters are replaced. Derive it in forward from the parameters (a cat/transpose of a few weights "
          "is cheap next to the GEMM), or recompute it in a load_state_dict post-hook "
          "(self.register_load_state_dict_post_hook(fn)); do not register it as a persistent buffer or "
          "parameter of its own: Model's state_dict has no such key, and the strict load fails.")


def loads_state_dict(backend_name: str) -> bool:
    """Whether ``kstrata export`` of a ``backend_name`` candidate loads the
    user's ``state_dict`` into its ``ModelNew`` (the ``pytorch``, ``triton``
    and ``tilelang`` families: :mod:`kstrata.cli.export`'s ``_FILE``); a
    ``tvm-*`` export binds the user ``Model``'s tensors to its compiled kernels
    at each call (``_TVM``), so it is left out."""
    return not backend_name.startswith("tvm-")


def reload_seed(param_seed: int) -> int:
    """The seed of the ``Model`` whose ``state_dict`` replaces ``ModelNew``'s
    parameters (:data:`RELOAD_SEED_OFFSET` past the test's parameter seed)."""
    return int(param_seed) + RELOAD_SEED_OFFSET


def state_items(model: torch.nn.Module) -> list[list[Any]]:
    """``model.state_dict()`` as ``[[name, tensor], ...]`` (detached, contiguous
    CPU copies), what the ``reload`` request carries."""
    return [[str(k), v.detach().to("cpu", copy=True).contiguous()] for k, v in model.state_dict().items()
            if isinstance(v, torch.Tensor)]


def _differs(a: list[list[Any]], b: list[list[Any]]) -> bool:
    """Whether two state lists hold other values anywhere (same names and shapes assumed)."""
    return any(x.shape != y.shape or not torch.equal(x, y) for (_, x), (_, y) in zip(a, b))


def check_param_reload(ctx: "Context", run: "ShapeRun", test: "TestCase") -> None:
    """Replace the loaded ``ModelNew``'s parameters with ``Model(seed B)``'s and
    judge one checked call on ``test``'s input (see the module's docstring).
    ``run`` is the last public shape's :class:`ShapeRun` (its candidate still
    loaded), ``test`` a public test of it. Returns when the output is right, the
    backend's export loads no state_dict, ``Model`` has no state, or its state
    is the same at both seeds (nothing to tell apart). A ``ModelNew`` that is
    no ``torch.nn.Module`` (where ``Model`` has a state) fails as a raising load:
    the export calls its ``load_state_dict``.

    Raises
    ------
    Stop
        ``incorrect`` (check ``param_reload``) for a wrong output after the
        load, ``runtime_error`` for a ``load_state_dict`` or a forward that
        raises; ``ctx.evaluation.feedback`` then says what is stale and what to do.
    """
    from kstrata.verify.runner import Stop, _clone, _incorrect, failing_level, tampered

    if not loads_state_dict(ctx.backend_name):
        return
    seed_a, seed_b = test.param_seed, reload_seed(test.param_seed)
    state = state_items(ctx.task.instantiate(test.shape_dict, seed_b, inputs=False)[0])
    if not state or not _differs(state, state_items(run.model)):
        return
    # the reference: Model built after seed A with the same state loaded, as ModelNew is; a tensor of Model's
    # outside its state_dict (a plain attribute, a non-persistent buffer) keeps seed A's values on both sides
    model_b = ctx.task.instantiate(test.shape_dict, seed_a, inputs=False)[0]
    model_b.load_state_dict(dict(state))
    level = failing_level(ctx.backend, ctx.sources)
    what = (f"after ModelNew (built after seed {seed_a}) loaded the state_dict of Model built after seed {seed_b} "
            "with load_state_dict (strict), as `kstrata export`'s KernelModule.from_model(model) loads a trained "
            "model's weights")
    when = (f"ModelNew built after seed {seed_a}, the state_dict of Model built after seed {seed_b}; `kstrata "
            "export`'s KernelModule.from_model(model) makes this call")
    ctx.current = test
    bufs: list[Any] = []
    h, _ = ctx.request({"op": "reload", "state": wire.encode(state, bufs, copy=False)}, bufs, True)
    ctx.fire_all(h.get("findings"), True, test)
    if not h.get("ok"):
        if h.get("kind") not in ("load_state_dict", "not_module"):
            raise tampered("the candidate process answered a reload malformed")
        msg = ("AttributeError: ModelNew is not a torch.nn.Module (it has no load_state_dict)"
               if h.get("kind") == "not_module" else str(h.get("message", "raised"))[:2000].rstrip(" ."))
        ctx.evaluation.feedback = [fb.item(
            "param_reload", level,
            f"ModelNew.load_state_dict(Model(...).state_dict()) raised {msg}: `kstrata export`'s "
            "KernelModule.from_model(model) makes this call (strict) and would fail. ModelNew's state_dict must "
            "have Model's keys, shapes and dtypes; keep a tensor of its own out of it (a plain attribute, or "
            "register_buffer(name, t, persistent=False)) and compute it from the parameters in forward or a "
            "load_state_dict post-hook.")]
        raise Stop(Verdict.RUNTIME_ERROR, "param_reload", f"ModelNew.load_state_dict (strict) raised {msg} ({when})",
                   stage="public", test=test.describe(), traceback=str(h.get("traceback", ""))[-3000:])
    kept = run.model, run.model64, run.model_dev, run.prev, ctx.weak_sample, dict(ctx.blind)
    try:
        from kstrata.verify.runner import oracle_model

        run.model, run.model64, run.model_dev = model_b, oracle_model(model_b), model_b.to(run.device)
        run.prev = None  # no no_caching comparison with the seed-A test before: the weights changed, not the input
        pristine, refs, oracles = run.prepare(test)
        try:
            outs, _ = run.call(_clone(pristine), test, refs)
        except Stop as s:
            if s.verdict == Verdict.RUNTIME_ERROR:
                s.evidence["message"] = f"{s.evidence.get('message', '')} ({what})"
            raise
        failure = run.judge(test, refs, oracles, outs, outs, pristine)
    finally:
        run.model, run.model64, run.model_dev, run.prev, ctx.weak_sample = kept[:5]
        ctx.blind.clear()
        ctx.blind.update(kept[5])
    if failure is None:
        return
    stale = _stale(run, pristine, outs, refs)
    said = _incorrect(failure, public=True)
    items = [fb.item("param_reload", level,
                     f"ModelNew's output is wrong {what}"
                     + (f": it is Model's output with the weights ModelNew was constructed with (seed {seed_a}), "
                        "not with the weights loaded" if stale else "")
                     + ". " + ADVICE)]
    for i, comp in enumerate(failure.comparisons):
        if not comp.ok and comp.bad is not None and i < len(failure.outputs):
            items += fb.describe_tensor(failure.outputs[i], failure.oracles[i], comp.bad, comp.stats, pristine)
            break
    ctx.evaluation.feedback = items
    raise Stop(Verdict.INCORRECT, "param_reload", f"{said.evidence['message']} {what}"
               + (" (the output is Model's with the weights of its construction: a derived copy is stale)"
                  if stale else ""), stage="public", test=test.describe(), stats=said.evidence.get("stats"),
               seeds={"constructed": seed_a, "loaded": seed_b}, stale=stale)


def _stale(run: "ShapeRun", pristine: list[Any], outs: list[Any], refs_b: list[torch.Tensor]) -> bool:
    """Whether ``outs`` (the candidate's after the load) agree with ``Model(seed A)``'s own
    output on the same input (``run.model_dev``, restored) within the dtype bound: the
    signature of a tensor derived from the constructor's weights."""
    from kstrata.tasks.inputs import seed_all
    from kstrata.verify.runner import _clone, _outputs_agree, flatten, rng_seed

    if run.ctx.current is None:
        return False
    with torch.no_grad():
        seed_all(rng_seed(run.ctx.current))
        ins = [x.to(run.device) if isinstance(x, torch.Tensor) else x for x in _clone(pristine)]
        refs_a = [r.detach().cpu() for r in flatten(run.model_dev(*ins))]
    return _outputs_agree(outs, refs_a, refs_b, run.ctx.task.meta.tolerance)
