"""Can the task's own reference run this verification? Checked before any candidate runs (issue #23).

The judge runs the reference and its float64 oracle once per test, so a
reference that runs out of memory, or whose calls alone outlast the time
limit, would otherwise surface as a candidate's ``timeout`` or ``oom``.
:func:`preflight` runs the reference and the oracle once at the costliest
shape of the plan, before the candidate process starts, and estimates the
judge's own time for the whole plan:

    estimate = sum over shapes s of  n_tests(s) * (t_ref + t_oracle(s)) * scale(s)

(skipped when the costliest shape is below :data:`SMALL_FLOPS` and
:data:`SMALL_BYTES`), where ``t_ref`` and ``t_oracle`` are the measured seconds of one call at the
costliest shape ``s_max``, ``t_oracle(s)`` counts only for tests planned with
the float64 oracle, and ``scale(s) = max(flops(s) / flops(s_max),
bytes(s) / bytes(s_max))`` (the task's formulas or measured work; 1 where
neither is known, which overestimates). An estimate above the time limit, or
an out-of-memory error in the reference or the oracle, raises
:class:`kstrata.tasks.base.ReferenceFailure` naming the reference, the shape
and what to change. The candidate's calls come on top of the estimate, so a
verification can still run out of time; the timeout's evidence then says how
much of the limit the judge's reference and oracle took (``judge_s``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch

from kstrata.tasks.base import ReferenceFailure, Task

#: A costliest shape at most this many FLOPs and bytes is not run ahead
#: (its calls take milliseconds; the check would only add to the judge's time).
SMALL_FLOPS = 2e8
SMALL_BYTES = 64e6


def is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocation failure (``MemoryError``, or PyTorch's
    ``RuntimeError`` from its CPU/CUDA allocators)."""
    if isinstance(exc, MemoryError):
        return True
    return isinstance(exc, RuntimeError) and says_oom(str(exc))


def says_oom(text: str) -> bool:
    """Whether an error message is an allocator's (PyTorch's CPU or CUDA
    allocator, ``std::bad_alloc``, Python's ``MemoryError``)."""
    text = text.lower()
    return any(k in text for k in ("can't allocate memory", "out of memory", "std::bad_alloc",
                                   "not enough memory", "memoryerror", "cannot allocate memory"))


def oom_failure(task: Task, where: str, exc: BaseException | str) -> ReferenceFailure:
    """The error for the reference (or its oracle) running out of memory ``where``."""
    return ReferenceFailure(
        f"{task.path}: the task's reference ran out of memory {where} (the judge's side, not the "
        f"candidate's): {str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__}; verify at "
        f"smaller shapes through the task's shapes metadata{_scaled_note(task)}")


def _scaled_note(task: Task) -> str:
    """What the shapes already are, when the task's were scaled for this CPU."""
    try:
        from kstrata.tasks import scaled

        if scaled.applies(task):
            return (" (these are already its sizes scaled down for a CPU; sizes fixed in get_inputs() "
                    "or derived from others at import do not scale)")
    except Exception:  # noqa: BLE001 - only the message's hint
        pass
    return ""


def _cost(task: Task, shape: dict[str, int]) -> tuple[float, float]:
    try:
        return float(task.flops(shape) or 0.0), float(task.bytes(shape) or 0.0)
    except Exception:  # noqa: BLE001 - a formula that fails here only loses the scaling
        return 0.0, 0.0


def plan_shapes(task: Task, tests: list[Any]) -> tuple[dict[tuple, int], dict[tuple, int], tuple]:
    """Tests per shape, float64-oracle tests per shape, and the costliest shape
    (by FLOPs, then bytes; the last planned shape when no cost is known)."""
    count: Counter = Counter(t.shape for t in tests)
    fp64: Counter = Counter(t.shape for t in tests if getattr(t, "oracle", "fp64") == "fp64")
    costs = {s: _cost(task, dict(s)) for s in count}
    worst = max(count, key=lambda s: (costs[s], list(count).index(s)))
    return dict(count), dict(fp64), worst


def _estimate(task: Task, count: dict[tuple, int], fp64: dict[tuple, int], worst: dict[str, int],
              ref_s: float, oracle_s: float) -> float:
    """The judge's seconds for the plan (module docstring's formula)."""
    f_max, b_max = _cost(task, worst)
    total = 0.0
    for s, n in count.items():
        f, b = _cost(task, dict(s))
        scale = max(f / f_max if f_max else 1.0, b / b_max if b_max else 1.0) if (f_max or b_max) else 1.0
        total += scale * (n * ref_s + fp64.get(s, 0) * oracle_s)
    return total


def preflight(task: Task, tests: list[Any], timeout_s: float | None, device: str,
              oracle_of: Callable[[torch.nn.Module], torch.nn.Module | None],
              seed_inputs: Callable[[Any, Any], list[Any]]) -> dict[str, Any]:
    """Run the reference and the float64 oracle once at the plan's costliest
    shape and check the judge's side of the verification fits.

    Parameters
    ----------
    task:
        The task.
    tests:
        Every planned test (:class:`kstrata.verify.plan.TestCase`), public and hidden.
    timeout_s:
        The verification's wall-clock limit in seconds (None: no time check).
    device:
        The reference's device (the backend's).
    oracle_of:
        Makes the float64 oracle of a model (None when it cannot).
    seed_inputs:
        ``seed_inputs(module, test)``: the test's inputs drawn as the judge draws them.

    Returns
    -------
    dict
        ``shape``, ``ref_s``, ``oracle_s`` (seconds of one call each, at that
        shape), ``estimate_s`` (the judge's estimated seconds for all tests).

    Raises
    ------
    ReferenceFailure
        When the reference or its oracle runs out of memory at that shape, or
        the estimate exceeds ``timeout_s``.
    """
    from kstrata.verify.runner import flatten

    if not tests:
        return {}
    count, fp64, worst = plan_shapes(task, tests)
    test = next(t for t in tests if t.shape == worst)
    shape = dict(worst)
    f_max, b_max = _cost(task, shape)
    if 0 < f_max <= SMALL_FLOPS and 0 < b_max <= SMALL_BYTES:
        return {"shape": shape, "skipped": "small"}  # a call this size takes milliseconds
    ref_s = oracle_s = 0.0
    try:
        with torch.random.fork_rng(devices=[]):
            model, _, _, module = task.instantiate(shape, test.param_seed, inputs=False)
            xs = seed_inputs(module, test)
            with torch.no_grad():
                t0 = time.perf_counter()
                flatten(model.to(device)(*[x.to(device) if isinstance(x, torch.Tensor) else x for x in xs]))
                ref_s = time.perf_counter() - t0
                if timeout_s and _estimate(task, count, {}, shape, ref_s, 0.0) > timeout_s:
                    fp64 = {}  # the references alone do not fit: no need to run the slower oracle
                if fp64.get(worst):
                    m64 = oracle_of(model.cpu())
                    if m64 is not None:
                        x64 = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                               for x in xs]
                        was = torch.get_default_dtype()
                        t0 = time.perf_counter()
                        try:
                            torch.set_default_dtype(torch.float64)
                            flatten(m64(*x64))
                        except Exception as e:  # noqa: BLE001 - a model with no float64 run: native decides
                            if is_oom(e):
                                raise
                        finally:
                            torch.set_default_dtype(was)
                        oracle_s = time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001 - only an allocation failure is this check's business
        if is_oom(e):
            raise oom_failure(task, f"at shape {shape}", e) from None
        return {"shape": shape, "skipped": f"{type(e).__name__}: {str(e)[:200]}"}
    estimate = _estimate(task, count, fp64, shape, ref_s, oracle_s)
    out = {"shape": shape, "ref_s": round(ref_s, 4), "oracle_s": round(oracle_s, 4),
           "estimate_s": round(estimate, 2), "tests": sum(count.values())}
    if timeout_s and estimate > timeout_s:
        raise ReferenceFailure(
            f"{task.path}: the task's reference cannot be verified within the {timeout_s:g} s limit at "
            f"these shapes: one call at {shape} takes {ref_s:.2f} s and its float64 oracle "
            f"{f'{oracle_s:.2f} s' if oracle_s else 'was not run (the references alone do not fit)'}, "
            f"about {estimate:.0f} s for the {out['tests']} tests' references and oracles alone, before "
            "any candidate call (the judge's side, not the candidate's); give a larger --timeout, or "
            f"smaller shapes through the task's shapes metadata{_scaled_note(task)}")
    return out
