"""``verify_candidate``: the verifier's entry point, run through a worker pool."""

from __future__ import annotations

from kstrata.backends.registry import get_backend
from kstrata.execute import CallResult, WorkerPool
from kstrata.sandbox.policy import HostOutOfMemory, SandboxStartError
from kstrata.tasks.base import ReferenceFailure, Task
from kstrata.verdict import Verdict
from kstrata.verify.crash import crash_item
from kstrata.verify.integrity.registry import preset as get_preset
from kstrata.verify.result import Evaluation

DEFAULT_TIMEOUT_S = 600.0


#: The judge's own work (inputs, the reference and the float64 oracle at every test shape, the comparisons) is
#: about two thirds of a CPU verification (README), and does not count against ``--timeout``: the whole
#: verification may take this many times the candidate's limit, plus :data:`START_ALLOWANCE_S`.
WALL_FACTOR = 3.0
#: Seconds for starting processes (the judge's worker, the sandbox's zygote, candidate processes).
START_ALLOWANCE_S = 300.0


def wall_limit(timeout_s: float) -> float:
    """The whole verification's wall-clock bound (s) for a candidate time limit of ``timeout_s``
    s: ``WALL_FACTOR * timeout_s + START_ALLOWANCE_S``. The judge's worker is killed past it."""
    return WALL_FACTOR * timeout_s + START_ALLOWANCE_S


class VerifierError(RuntimeError):
    """A bug in kstrata itself while verifying (never a candidate's fault)."""


def _from_call(r: CallResult, task: Task, backend_name: str, preset: str, timeout_s: float) -> Evaluation:
    base = dict(task=task.name, backend=backend_name, preset=preset, seconds=r.wall_s)
    if r.ok:
        ev = Evaluation.from_dict(r.value)
        if ev.check == "crash" and not ev.feedback:  # a signal alone says nothing: what it likely means
            found = crash_item(ev.evidence if isinstance(ev.evidence, dict) else {}, backend_name)
            ev.feedback = [found] if found else []
        return ev
    if r.kind == "timeout":
        return Evaluation(Verdict.TIMEOUT, "wall_clock",
                          {"message": f"verification did not finish within {wall_limit(timeout_s):g} s "
                                      f"({WALL_FACTOR:g} x the --timeout of {timeout_s:g} s for the candidate, plus "
                                      f"{START_ALLOWANCE_S:g} s for starting processes); the judge was killed while "
                                      "the reference or the oracle ran (a candidate that uses its time is stopped "
                                      "and named as such before that): the task's shapes may be too large for this "
                                      "machine"}, **base)
    if r.error.startswith("ReferenceFailure: "):
        raise ReferenceFailure(r.error.removeprefix("ReferenceFailure: "))
    if r.error.startswith("SandboxStartError: "):  # kstrata's side (a process's start runs no candidate code)
        raise SandboxStartError(r.error.removeprefix("SandboxStartError: "))
    if r.error.startswith("HostOutOfMemory: "):  # the machine's OOM killer, not the candidate's limit
        raise HostOutOfMemory(r.error.removeprefix("HostOutOfMemory: "))
    if r.kind in ("crash", "oom"):
        # the judge's worker runs the reference and the float64 oracle; the candidate runs in a
        # process of its own, whose death is a verdict inside the protocol, never this
        what = "ran out of memory" if r.kind == "oom" else f"died ({r.error})"
        raise ReferenceFailure(f"{task.path}: the judge's process, which runs the task's reference and "
                               f"its float64 oracle (not the candidate), {what}; verify at smaller shapes "
                               "(the task's shapes metadata)")
    if not r.error.split(":")[0].endswith(("Error", "Exception", "Warning")) or r.error.startswith(
            ("SystemExit", "KeyboardInterrupt", "GeneratorExit")):
        return Evaluation(Verdict.RUNTIME_ERROR, "run", {"message": f"candidate raised {r.error}"}, **base)
    raise VerifierError(f"kstrata verifier failed on {task.name}/{backend_name}: {r.error}\n{r.traceback}")


def verify_candidate(task: Task, backend_name: str, sources: dict[str, str], *, secret: str,
                     pool: WorkerPool | None = None, preset: str = "strict",
                     timeout_s: float = DEFAULT_TIMEOUT_S, scope: str = "full",
                     timed_shapes: list[dict[str, int]] | None = None, reveal_hidden: bool = False,
                     pad_hidden: bool = False) -> Evaluation:
    """Verify a candidate for ``task`` in a killable worker.

    Parameters
    ----------
    task:
        The task (from :func:`kstrata.tasks.loader.resolve_task`).
    backend_name:
        Registry name of the candidate's backend (``pytorch``, ``triton-interp``, ...).
    sources:
        ``{level: text}``; Python backends read ``"source"`` (a KernelBench
        ``ModelNew`` file).
    secret:
        Per-run secret; hidden seeds and shape perturbations derive from it
        (HMAC-SHA256), so keep it out of prompts.
    pool:
        Worker pool to use; by default a fresh one-worker pool with the
        backend's ``worker_env`` is started and closed. A pool's workers must
        be set up for the backend (e.g. ``TRITON_INTERPRET=1`` is set in-process
        by ``triton-interp`` itself, so any pool works for it).
    preset:
        Integrity preset: ``"strict"`` (every check rejects) or ``"warn"``.
    timeout_s:
        The candidate's time limit in seconds (``timeout`` verdict): its
        requests' time; the judge's work and process starts do not count, and
        the whole protocol is bounded by :func:`wall_limit`.
    scope:
        ``"full"`` (hidden stage on the sweep shapes) or ``"small"`` (hidden
        stage on perturbed small shapes and the sweep's shapes no costlier
        than those, :func:`kstrata.verify.plan.screening_shapes`; for
        screening, tests and quick checks).
    timed_shapes:
        Shapes the candidate will be timed at; each is verified with the hidden
        protocol too.
    reveal_hidden:
        A hidden-stage failure names its test (``evidence["hidden_test"]``;
        :func:`kstrata.verify.runner.run_protocol`): for ``kstrata eval
        --show-hidden`` under a secret of its own, never for a search.
    pad_hidden:
        The hidden stage lasts a rung of a budget fixed before it ran
        (:mod:`kstrata.verify.hidden_pad`): for callers whose client sees how
        long the verification took (the MCP server, the RL environment).

    The candidate runs in a sandboxed candidate process started by the judge
    (the worker); ``--unsafe-no-sandbox`` (:data:`kstrata.sandbox.policy.UNSAFE_ENV`)
    is passed on explicitly.

    Returns
    -------
    Evaluation
        The verdict with evidence and feedback. Candidate failures (including
        crashes and hangs) are data.

    Raises
    ------
    kstrata.backends.registry.UnknownBackendError
        For an unknown backend name.
    kstrata.verify.integrity.registry.UnknownPresetError
        For an unknown preset.
    VerifierError
        On a bug in kstrata itself.
    kstrata.tasks.base.ReferenceFailure
        When the task's own reference (or its float64 oracle) cannot run the
        verification: out of memory, or too slow for ``timeout_s`` at the
        planned shapes (checked before any candidate call,
        :func:`kstrata.verify.reference.preflight`). A ``TaskError``.
    kstrata.sandbox.SandboxUnavailable
        When no sandbox can be made here and ``--unsafe-no-sandbox`` was not given;
        :class:`~kstrata.sandbox.policy.SandboxStartError` (one) when a candidate
        process's sandbox did not start (no candidate code had run: not a verdict).
    """
    backend = get_backend(backend_name)
    get_preset(preset)
    from kstrata.sandbox.policy import require

    require()  # refuse untrusted candidates without a sandbox, unless --unsafe-no-sandbox
    own = pool is None
    if own:
        from kstrata.backends.workers import pool_for

        pool = pool_for(backend)
    try:
        from kstrata.sandbox.policy import unsafe_requested

        r = pool.call("kstrata.verify.runner:run_protocol", task, backend_name, dict(sources), secret,
                      preset, scope, [dict(s) for s in timed_shapes or []], unsafe_requested(), timeout_s,
                      bool(reveal_hidden), timeout_s=wall_limit(timeout_s),
                      **({"pad_hidden": True} if pad_hidden else {}))
    finally:
        if own:
            pool.close()
    return _from_call(r, task, backend_name, preset, timeout_s)
