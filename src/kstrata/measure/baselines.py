"""Baselines a candidate is compared with, built, timed and cached.

* ``eager``: the task's reference ``Model`` run by PyTorch.
* ``compile``: ``torch.compile(Model)``; compiled by a first call outside the
  timed region; a failure is recorded as unavailable with its reason.
* ``metaschedule``: for the TVM backends, the task tuned by TVM MetaSchedule
  with a recorded trial budget (EdgeKernelBench's baseline for Fast@1.0), via
  ``kstrata.backends.tvm.tune``; its tuning database lives under the cache dir
  keyed by task, shape, target, versions and trials.

Results are cached as JSON under ``<cache dir>/baselines/<key>.json``, the key
hashing everything that changes them (:func:`baseline_key`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from kstrata import jsontext
from kstrata.backends.registry import get_backend
from kstrata.measure import environment
from kstrata.measure.baseline_names import KINDS, check_baselines, kinds_for  # noqa: F401 (re-exported)
from kstrata.measure.roofline import atomic_write_text, cache_dir
from kstrata.measure.timing import Measurement, TimingConfig, measure
from kstrata.tasks.base import Task

TVM_MISSING = "not available: TVM backend missing (no kstrata.backends.tvm.tune)"


class BaselineUnavailable(Exception):
    """A baseline that cannot be built here; the message says why."""


def compiled(model: torch.nn.Module, inputs: list[Any]) -> Callable[..., Any]:
    """``torch.compile(model)``, compiled by one call here (never while timed).

    Raises
    ------
    BaselineUnavailable
        If compiling or the first call fails (the reason is the exception text).
    """
    try:
        fn = torch.compile(model)
        with torch.inference_mode():
            fn(*inputs)
    except Exception as e:  # noqa: BLE001 - torch.compile failures are data
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise BaselineUnavailable(f"torch.compile failed: {type(e).__name__}: {first}"[:500]) from e
    return fn


def tuned_tvm(task: Task, shape: dict[str, int], backend: str, init_inputs: list[Any],
              trials: int, work_dir: Path) -> tuple[Callable[..., Any], dict]:
    """The MetaSchedule-tuned TVM implementation of ``task`` at ``shape``.

    Calls ``kstrata.backends.tvm.tune.tune(task, shape, backend, trials,
    work_dir)`` (which caches tuned schedules itself) and loads the returned
    ``.sources`` through the backend; compilation happens here, never while timed.

    Returns
    -------
    (callable, info)
        ``info`` has the tuning ``records`` and cache ``key``.

    Raises
    ------
    BaselineUnavailable
        When the TVM backend (or its ``tune``) is missing, or tuning or loading fails.
    """
    try:
        from kstrata.backends.tvm.tune import tune
    except ImportError:
        raise BaselineUnavailable(TVM_MISSING) from None
    try:
        result = tune(task, shape, backend, trials, work_dir)
        fn = get_backend(backend).load(task, result.sources, shape, init_inputs)
    except Exception as e:  # noqa: BLE001 - tuning failures are data
        raise BaselineUnavailable(f"MetaSchedule tuning failed: {type(e).__name__}: {e}"[:500]) from e
    return fn, {"records": getattr(result, "records", []), "key": getattr(result, "key", ""),
                "tune_cached": getattr(result, "cached", False)}


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:24]


def baseline_key(task: Task, shape: dict[str, int], backend: str, trials: int,
                 config: TimingConfig) -> str:
    """Hash of everything that changes a baseline: task text, full shape,
    backend (and so target), device, library versions, thread count, MetaSchedule
    trials and the timing configuration."""
    return _digest({
        "task": task.digest, "shape": task.full_shape(shape), "backend": backend,
        "device": environment.device_name(get_backend(backend).device),
        "versions": environment.versions(), "threads": config.threads or "all",
        "trials": trials if backend.startswith("tvm") else None, "timing": config.to_dict(),
    })


@dataclass
class BaselineResult:
    """One baseline: its time, or why it is unavailable.

    Attributes
    ----------
    kind:
        One of :data:`KINDS`.
    available:
        False when it could not be built; ``reason`` says why.
    measurement:
        A :class:`Measurement` as a dict. For ``compile`` and ``metaschedule``
        it is paired with eager (``speedup`` = eager / this).
    trials:
        MetaSchedule trials (``metaschedule`` only).
    cached:
        True when read from the cache rather than measured now.
    """

    kind: str
    available: bool
    reason: str = ""
    measurement: dict | None = None
    trials: int | None = None
    cached: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def median_ms(self) -> float | None:
        return self.measurement["candidate"]["median"] if self.measurement else None

    def to_dict(self) -> dict:
        return asdict(self)


def run_baselines(
    task: Task | str,
    backend: str,
    shape: dict[str, int] | None = None,
    *,
    trials: int = 64,
    config: TimingConfig | None = None,
    use_cache: bool = True,
    seed: int = 0,
    unavailable: dict[str, str] | None = None,
) -> list[BaselineResult]:
    """Build and time the baselines for ``backend`` on ``task`` at ``shape``.

    Runs in a worker (all arguments picklable) or in-process. Each non-eager
    baseline is timed paired with eager; eager's own entry comes from the
    first such pair (or a single-callable timing if none is available).

    Parameters
    ----------
    task:
        A :class:`Task` or a name/path for :func:`kstrata.tasks.loader.resolve_task`.
    backend:
        Registry name; decides the device and whether MetaSchedule applies.
    shape:
        Shape variables (default: the nominal shape).
    trials:
        MetaSchedule trial budget.
    use_cache:
        Read and write the JSON cache.
    unavailable:
        ``{kind: reason}`` for baselines the caller already knows cannot be
        built (e.g. MetaSchedule crashed in a separate worker); not cached.

    Returns
    -------
    list[BaselineResult]
        In :func:`kinds_for` order.
    """
    from kstrata.tasks.loader import resolve_task

    task = resolve_task(task) if isinstance(task, str) else task
    config = config or TimingConfig()
    shape = task.full_shape(shape)
    path = cache_dir() / "baselines" / f"{baseline_key(task, shape, backend, trials, config)}.json"
    if use_cache and path.exists():
        try:
            return [BaselineResult(**{**d, "cached": True}) for d in jsontext.loads(path.read_text())]
        except (ValueError, TypeError):
            pass  # a stale format: measure again
    device = get_backend(backend).device
    environment.fix_threads(config.threads)
    model, inputs, init_inputs, _ = task.instantiate(shape, seed)
    model = model.to(device)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]

    results: dict[str, BaselineResult] = {}
    eager_m: Measurement | None = None
    for kind in kinds_for(backend)[1:]:
        info: dict = {}
        try:
            if kind in (unavailable or {}):
                raise BaselineUnavailable(unavailable[kind])  # type: ignore[index]
            if kind == "compile":
                fn = compiled(model, inputs)
            else:
                work = cache_dir() / "metaschedule" / baseline_key(task, shape, backend, trials,
                                                                  TimingConfig())
                fn, info = tuned_tvm(task, shape, backend, init_inputs, trials, work)
        except BaselineUnavailable as e:
            results[kind] = BaselineResult(kind, False, str(e),
                                           trials=trials if kind == "metaschedule" else None)
            continue
        m = measure(fn, inputs, model, config, device=device,
                    labels={"candidate": kind, "baseline": "eager"})
        results[kind] = BaselineResult(kind, True, measurement=m.to_dict(),
                                       trials=trials if kind == "metaschedule" else None,
                                       extra=info)
        if eager_m is None:
            eager_m = m
    if eager_m is not None:  # eager's spread, taken from its paired role
        d = eager_m.to_dict()
        d.update(candidate=d["baseline"], candidate_ms=d["baseline_ms"], baseline=None,
                 baseline_ms=[], speedup=None, labels={"candidate": "eager",
                                                        "paired_with": eager_m.labels["candidate"]})
        results["eager"] = BaselineResult("eager", True, measurement=d)
    else:
        m = measure(model, inputs, None, config, device=device, labels={"candidate": "eager"})
        results["eager"] = BaselineResult("eager", True, measurement=m.to_dict())
    out = [results[k] for k in kinds_for(backend)]
    if use_cache and not unavailable:
        atomic_write_text(path, json.dumps([r.to_dict() for r in out], sort_keys=True))
    return out


def tuned_tvm_info(task: Task | str, shape: dict[str, int], backend: str, trials: int) -> dict:
    """Tune (or find cached) the MetaSchedule baseline and build it once; for a
    separate worker call before :func:`run_baselines`, so that a crash inside
    TVM loses only this baseline. Returns the tuning info.

    Raises
    ------
    BaselineUnavailable
        As :func:`tuned_tvm`.
    """
    from kstrata.tasks.loader import resolve_task

    task = resolve_task(task) if isinstance(task, str) else task
    shape = task.full_shape(shape)
    _, _, init_inputs, _ = task.instantiate(shape, 0)
    work = cache_dir() / "metaschedule" / baseline_key(task, shape, backend, trials, TimingConfig())
    return tuned_tvm(task, shape, backend, init_inputs, trials, work)[1]
