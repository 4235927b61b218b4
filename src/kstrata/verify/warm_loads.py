"""Warm loads: a stage's loads run first in parallel processes of the same
candidate, so that the stage's own process finds every shape compiled
(issue #18: a tilelang-cuda verification took ~38 s on the H200, ~4 s per
shape of TileLang lowering and nvcc inside the candidate's first call, one
shape after another).

For a backend whose :meth:`~kstrata.backends.base.Backend.load` compiles the
candidate's kernels inside the candidate's own code
(:attr:`~kstrata.backends.base.Backend.compiles_at_load`: TileLang), the
judge cannot build ahead in its place (:mod:`kstrata.verify.prepare` can for
TVM, whose builds are kstrata's). Compiling in threads of one process does not
overlap either (TileLang's compile holds the interpreter: two threads took as
long as one here). So at a stage's start, before the process that runs the
stage is forked, the judge forks up to :func:`procs` more processes of the same
candidate (each its own sandbox, from the same kernel-cache archive), and each
loads a share of the stage's shapes: the same ``load`` request as the stage's
(same inputs, seed, poison pattern), so the same kernels are compiled. When
each ends, its zygote packs its compiler caches and the judge merges them into
the candidate's archive (:func:`kstrata.sandbox.kernel_cache.store`); the
stage's process starts from that archive and its loads find the kernels on
disk.

The verdict does not change: nothing a warm load replies decides anything but
its run-time findings, which are fired as a load's would be, in the same stage
(a warm load runs the candidate's code as the load does). A warm load that fails
or dies is ignored: the stage's load at that shape repeats the work and reports
it. The hidden shapes are sent when the hidden stage begins, never before (as the
loads would bring them); the stage's process is then replaced by a fresh one that
starts from the archive with them, as :mod:`kstrata.verify.prepare` replaces a
process that died. Warm processes share the verification's time limit.

``KSTRATA_VERIFY_PREPARE=0`` turns it off with compiling ahead;
``KSTRATA_VERIFY_WARM_PROCS`` sets the number of processes (0: off).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kstrata.backends.base import Backend
from kstrata.execute.cpus import allowed_cpu_count
from kstrata.sandbox import kernel_cache
from kstrata.sandbox.client import CandidateDied
from kstrata.verify import prepare

#: the environment variable that sets how many warm processes a stage gets (0: none)
PROCS_ENV = "KSTRATA_VERIFY_WARM_PROCS"

#: most warm processes of one stage (each holds a sandbox, a CUDA context and ~0.5 GB of GPU memory)
MAX_PROCS = 8


def procs(n_shapes: int) -> int:
    """How many warm processes a stage of ``n_shapes`` distinct shapes gets:
    :data:`PROCS_ENV` when set (a whole number), else one per two CPUs this
    process may use beyond one, at most :data:`MAX_PROCS`; never more than
    the shapes. Below 2 there is nothing to overlap with the stage's own
    process start, so 0 (off): a 2-CPU machine gets none unless it is set."""
    v = os.environ.get(PROCS_ENV, "").strip()
    k = int(v) if v.isdigit() else min(MAX_PROCS, (allowed_cpu_count() - 1) // 2)
    k = min(k, n_shapes)
    return k if k >= 2 or v.isdigit() else 0


def wanted(backend: Backend) -> bool:
    """Whether a verification on ``backend`` warms its stages' loads: the
    backend compiles at its load (:attr:`Backend.compiles_at_load`),
    compiling ahead is on (:func:`kstrata.verify.prepare.enabled`) and
    :data:`PROCS_ENV` is not 0."""
    return (getattr(backend, "compiles_at_load", False) and prepare.enabled()
            and os.environ.get(PROCS_ENV, "").strip() != "0")


def stage_loads(ctx: Any, tests: list[Any]) -> list[tuple[dict[str, Any], list[Any]]]:
    """The ``load`` requests (header and buffers) of a stage's distinct
    (shape, parameter seed) pairs, in first-use order, as
    :class:`kstrata.verify.runner.ShapeRun` sends them
    (:func:`kstrata.verify.runner.load_request`)."""
    from kstrata.verify.runner import load_request

    out, seen = [], set()
    for t in tests:
        key = (t.shape, t.param_seed)
        if key in seen:
            continue
        seen.add(key)
        _, _, init_inputs, _ = ctx.task.instantiate(t.shape_dict, t.param_seed, inputs=False)
        out.append(load_request(ctx, t.shape_dict, t.param_seed, init_inputs, ctx.threads))
    return out


def warm_stage(ctx: Any, tests: list[Any], public: bool, spawn: Callable[[float], Any]) -> dict[str, Any] | None:
    """Run ``tests``' loads (one stage's, about to run) in up to :func:`procs`
    fresh processes of the candidate, side by side, and end them (their
    compiler caches go into the candidate's archive as each ends); returns
    ``{"procs", "loads", "failed", "seconds"}`` or None (off, or fewer than
    two shapes to share).

    Parameters
    ----------
    ctx:
        The judge's :class:`kstrata.verify.runner.Context` (its task, backend,
        sources, deadline; ``ctx.load_seconds`` gets the seconds of a public stage). Its
        ``proc`` (the stage's process, or the one about to start) must have a
        kernel-cache key (a sandboxed candidate), else there is nothing to do.
    tests:
        The stage's tests; only their (shape, seed) pairs are loaded.
    public:
        Whether the stage is the public one: the warm processes of a hidden
        stage are marked as having seen hidden tests, as the stage's own is.
    spawn:
        Starts a fresh process of the candidate within ``timeout_s`` seconds
        (what the verification starts its stage's process with).

    Raises
    ------
    kstrata.verify.runner.Stop
        When a run-time finding of a warm load rejects the candidate (as the
        stage's load would).
    """
    if not wanted(ctx.backend) or not getattr(ctx.proc, "kernel_cache", None) or kernel_cache.total_limit() <= 0:
        return None  # no archive carries their kernels to the stage's process (no sandbox, or the cache is off)
    loads = stage_loads(ctx, tests)
    k = procs(len(loads))
    if k < 1 or len(loads) < 2:
        return None
    t0 = time.monotonic()
    share = None if ctx.deadline is None else max(1.0, (ctx.deadline - t0) * prepare.TIME_SHARE)
    stop_at = None if share is None else t0 + share

    def left() -> float:
        return 300.0 if stop_at is None else max(0.5, stop_at - time.monotonic())

    def one(part: list[tuple[dict[str, Any], list[Any]]]) -> tuple[int, int, list[Any]]:
        ok = failed = 0
        findings: list[Any] = []
        try:
            proc = spawn(left())
        except Exception:  # noqa: BLE001 - the stage's own process meets the same problem and reports it
            return 0, len(part), findings
        proc.saw_hidden = not public
        try:
            for header, bufs in part:
                if stop_at is not None and time.monotonic() >= stop_at:
                    failed += 1
                    continue
                try:
                    h, _ = proc.request(header, bufs, timeout_s=left())
                except CandidateDied:
                    failed += len(part) - ok - failed
                    break
                if isinstance(h, dict) and h.get("ok"):
                    ok += 1
                    if isinstance(h.get("findings"), list):
                        findings.extend(h["findings"])
                else:
                    failed += 1
        finally:
            proc.close()
        return ok, failed, findings

    parts = [loads[i::k] for i in range(k)]
    with ThreadPoolExecutor(k, thread_name_prefix="kstrata-warm") as pool:
        results = list(pool.map(one, parts))
    ctx.fire_all([f for _, _, fs in results for f in fs], public)
    seconds = time.monotonic() - t0
    if public:  # compile time, as the loads' it replaces; at the hidden stage the candidate's loads choose
        # how long they take, which could spell the hidden shapes (as the load seconds they report; rt55)
        ctx.load_seconds += seconds
    return {"procs": k, "loads": sum(r[0] for r in results), "failed": sum(r[1] for r in results),
            "seconds": round(seconds, 3)}
