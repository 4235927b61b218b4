"""Timing a candidate against a baseline: the function a worker runs.

``kstrata.execute`` calls ``"kstrata.measure.candidate:time_candidate"`` with
picklable arguments; tests call it in-process. Everything that builds
(candidate, baseline, ``torch.compile``) happens before :func:`measure`.
"""

from __future__ import annotations


import torch

from kstrata.backends.registry import get_backend
from kstrata.measure import environment, roofline
from kstrata.measure.baselines import compiled, tuned_tvm
from kstrata.measure.profilers import perf
from kstrata.measure.profilers.findings import findings
from kstrata.measure.roofline import cache_dir
from kstrata.measure.timing import Measurement, TimingConfig, measure, under_floor
from kstrata.tasks.base import Task


def time_candidate(
    backend: str,
    task: Task | str,
    sources: dict[str, str],
    shape: dict[str, int] | None = None,
    *,
    baseline: str = "eager",
    baseline_sources: dict[str, str] | None = None,
    trials: int = 64,
    config: TimingConfig | None = None,
    seed: int = 0,
    with_roofline: bool = True,
    counters: bool = False,
) -> Measurement:
    """Build the candidate and its baseline for ``shape``, then time them paired.

    Parameters
    ----------
    backend:
        Registry name of the candidate's backend.
    task:
        A :class:`Task`, or a name/path for ``resolve_task``.
    sources:
        The candidate's ``{level: text}``.
    shape:
        Shape variables (default nominal).
    baseline:
        ``"eager"`` (the reference Model), ``"compile"`` (``torch.compile``),
        ``"metaschedule"`` (tuned TVM, ``trials`` trials) or ``"sources"``
        (``baseline_sources`` built by the same backend, e.g. the parent candidate).
    config:
        Timing settings (:class:`TimingConfig`).
    seed:
        Seeds parameters and inputs (as the verifier does).
    with_roofline:
        Place both medians on the cached roofline, flag a candidate faster
        than the roofline floor as suspicious, and derive findings from it.
    counters:
        On CPU, also count ``perf stat`` hardware events over the candidate's
        calls (after timing; skipped with the reason where perf cannot count).
        On GPUs use :func:`kstrata.measure.profilers.ncu.profile`, which must
        wrap a separate process.

    Raises
    ------
    kstrata.backends.base.CandidateLoadError
        If the candidate (or ``baseline_sources``) does not build.
    kstrata.measure.baselines.BaselineUnavailable
        If the requested baseline cannot be built here.
    """
    from kstrata.tasks.loader import resolve_task

    task = resolve_task(task) if isinstance(task, str) else task
    config = config or TimingConfig()
    shape = task.full_shape(shape)
    b = get_backend(backend)
    device = b.device
    if not device.startswith("cuda"):
        environment.fix_threads(config.threads)
    model, inputs, init_inputs, _ = task.instantiate(shape, seed)
    model = model.to(device)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
    torch.manual_seed(seed)
    cand = b.load(task, sources, shape, init_inputs)
    if baseline == "eager":
        base = model
    elif baseline == "compile":
        base = compiled(model, inputs)
    elif baseline == "metaschedule":
        work = cache_dir() / "metaschedule" / f"{task.digest[:16]}"
        base, _ = tuned_tvm(task, shape, backend, init_inputs, trials, work)
    elif baseline == "sources":
        if baseline_sources is None:
            raise ValueError("baseline='sources' needs baseline_sources")
        torch.manual_seed(seed)
        base = b.load(task, baseline_sources, shape, init_inputs)
    else:
        raise ValueError(f"unknown baseline {baseline!r}")

    flops, nbytes = task.flops(shape), task.bytes(shape)
    ceil = roofline.ceilings(device, task.meta.dtype) if with_roofline and (flops or nbytes) else None
    floor = roofline.floor_ms(flops, nbytes, ceil) if ceil else None
    m = measure(cand, inputs, base, config, device=device, floor_ms=floor,
                labels={"candidate": backend, "baseline": baseline, "task": task.name,
                        "shape": shape})
    if ceil is not None and m.baseline is not None and floor is not None and m.baseline.median < floor:
        # the trusted baseline beat the floor: the cached ceilings are low, not the baseline a cheat
        ceil = roofline.raise_to_observed(ceil, device, flops, nbytes, m.baseline.median)
        floor = roofline.floor_ms(flops, nbytes, ceil)
        m.suspicious = [s for s in m.suspicious if "below the roofline floor" not in s] + under_floor(
            m.candidate.median, floor, " (ceilings raised to the baseline's achieved rate)")
    point = None
    if ceil is not None:
        point = roofline.analyze(m.candidate.median, flops, nbytes, ceil)
        m.roofline = {
            "ceilings": ceil.to_dict(),
            "candidate": point.to_dict(),
            "baseline": roofline.analyze(m.baseline.median, flops, nbytes, ceil).to_dict()
            if m.baseline else None,
        }
    per_call = None
    if counters and not device.startswith("cuda"):
        with torch.inference_mode():
            c = perf.count(lambda: cand(*inputs))
        m.counters = {"tool": "perf", "ok": c.ok, "reason": c.reason, "per_call": c.per_call}
        per_call = c.per_call or None
    m.findings = [f.to_dict() for f in findings(point, ceil, min_bytes=nbytes, perf=per_call,
                                                 dtype=task.meta.dtype)]
    return m
