"""Compile ahead: at a stage's start the judge tells the candidate process the
shapes that stage will test, so that a backend that builds per shape compiles
them all at once (:meth:`kstrata.backends.base.Backend.prepare`: on tvm-cuda a
normal and two poison builds per shape, each an nvcc run) instead of one after
another at each shape's load (issue #18: 37-55 s per tvm-cuda verification on
the H200, Triton 1.5 s).

Only the stage that is starting is sent: the hidden shapes reach the candidate
process when the hidden stage begins, as the loads would bring them. The
verdict does not change: the reply decides nothing (its counts are for
measurement; its run-time findings are fired as a load's would be, in the same
stage); a build that fails is reported by its shape's load, as before; and when
the candidate process dies during the request (a crash, memory, its share of the
time) a fresh one continues the verification without it, so the first load that
meets the problem reports it as it would have.

``KSTRATA_VERIFY_PREPARE=0`` (the judge's environment) turns it off.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from kstrata.backends.base import Backend
from kstrata.sandbox.client import CandidateDied

#: the environment variable that turns compiling ahead off (``0``, ``false``, ``no``, ``off``)
ENV = "KSTRATA_VERIFY_PREPARE"

#: the share of the verification's time left that one prepare request may take; past it the
#: candidate process is ended and a fresh one goes on without compiling ahead
TIME_SHARE = 0.5


def enabled() -> bool:
    """Whether the judge compiles ahead (:data:`ENV`; on unless set to 0/false/no/off)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def wanted(backend: Backend) -> bool:
    """Whether ``backend`` compiles anything ahead (it overrides :meth:`Backend.prepare`) and it is on."""
    return enabled() and type(backend).prepare is not Backend.prepare


def stage_shapes(tests: list[Any]) -> list[dict[str, int]]:
    """The distinct shapes of a stage's tests (:class:`kstrata.verify.plan.TestCase`), in first-use order."""
    out: list[dict[str, int]] = []
    for t in tests:
        if t.shape_dict not in out:
            out.append(t.shape_dict)
    return out


def prepare_stage(ctx: Any, tests: list[Any], public: bool, respawn: Callable[[], Any],
                  header: dict[str, Any]) -> dict[str, Any] | None:
    """Ask the candidate process (``ctx.proc``) to build what ``tests`` (one
    stage's, about to run) will load; returns its counts (builds made and
    failed, concurrent builds, seconds; the seconds are added to
    ``ctx.load_seconds``, the build time they take from the loads) or None
    (off, nothing to compile ahead, or the process died and was replaced).

    Parameters
    ----------
    ctx:
        The judge's :class:`kstrata.verify.runner.Context`; ``ctx.proc`` is
        replaced by ``respawn()`` when the candidate process dies during
        the request, and ``ctx.prepare_off`` is then set (later stages load as before).
    tests:
        The stage's tests; only their shapes are sent.
    public:
        Whether the stage is the public one (the findings' stage).
    respawn:
        Starts a fresh candidate process for this candidate (its start has a
        limit of its own, :data:`kstrata.verify.runner.START_S`).
    header:
        The load request's fields that name the build: ``backend``, ``task``,
        ``sources``, ``poison``.

    Raises
    ------
    kstrata.verify.runner.Stop
        When a run-time finding of the request rejects the candidate (as at a load).
    """
    if getattr(ctx, "prepare_off", False) or not wanted(ctx.backend):
        return None
    left = None if ctx.deadline is None else max(0.5, ctx.deadline - time.monotonic())
    request = {**header, "op": "prepare", "shapes": stage_shapes(tests)}
    try:
        h, _ = ctx.proc.request(request, [], timeout_s=None if left is None else left * TIME_SHARE)
    except CandidateDied:
        ctx.prepare_off = True
        ctx.proc.close()
        hidden = ctx.proc.saw_hidden
        ctx.proc = respawn()
        ctx.proc.saw_hidden = hidden
        return None
    if not isinstance(h, dict) or not h.get("ok"):
        return None
    ctx.fire_all(h.get("findings"), public)
    counts = {k: h[k] for k in ("built", "failed", "workers", "seconds")
              if isinstance(h.get(k), (int, float)) and not isinstance(h.get(k), bool) and 0 <= h[k] < 1e7}
    if public:  # (a number the candidate's process sends: at the hidden stage it could carry the shapes)
        ctx.load_seconds += float(counts.get("seconds", 0.0))  # build time, as the loads' it replaces
    return counts
