"""An environment API for reinforcement learning on kernels.

One episode improves one task on one backend, as in AutoTriton, TritonRL and
Kevin-32B training loops::

    env = KernelEnv("softmax", "pytorch")
    obs = env.reset()                      # prompt material
    result = env.step(policy(obs.prompt))  # reward, verdict, info, done
    group = env.evaluate_many(samples)     # GRPO-style group of rollouts

Every step is judged by the verifier with the hidden tests of a per-env secret
(never shown in an observation), and rewarded by
:func:`kstrata.serve.rewards.shaped_reward`; cheating (``rejected``) never
pays. Candidates run in killable worker processes of one
:class:`~kstrata.execute.WorkerPool`, ``evaluate_many`` in parallel over it.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kstrata.execute import WorkerPool
from kstrata.serve.public import public_source, public_task
from kstrata.serve.rewards import FORMAT_ERROR, RewardConfig, shaped_reward
from kstrata.serve.service import (
    Outcome,
    ServeError,
    candidate_sources,
    evaluate,
    load_backend,
    load_task,
    new_secret,
)
from kstrata.tasks.base import Task


@dataclass
class Observation:
    """What the policy sees at the start of an episode and after each step.

    Attributes
    ----------
    task:
        The public task contract (:func:`kstrata.serve.public.public_task`):
        reference source, public shapes, dtype, tolerance, FLOPs and bytes.
    backend:
        Backend name; ``levels`` are the source levels a candidate has.
    best_source:
        Sources of the best correct candidate so far (the backend's initial
        candidate at reset, when it has one).
    best_speedup:
        Its speedup, or None.
    feedback:
        The public result of the last step (None at reset).
    prompt:
        All of the above as one text for a language model.
    """

    task: dict[str, Any]
    backend: str
    levels: tuple[str, ...]
    best_source: dict[str, str] | None
    best_speedup: float | None
    feedback: dict[str, Any] | None
    prompt: str


@dataclass
class StepResult:
    """The outcome of one candidate.

    Attributes
    ----------
    reward:
        Shaped reward (see :mod:`kstrata.serve.rewards`).
    verdict:
        A verdict kind, or ``"format_error"`` for input that never reached the
        backend (empty source, unknown level).
    info:
        ``reward_parts``, the public ``evaluation`` (feedback, timing),
        ``speedup``, and ``error`` for format errors.
    done:
        True when the step budget of the episode is used up.
    """

    reward: float
    verdict: str
    info: dict[str, Any] = field(default_factory=dict)
    done: bool = False


class KernelEnv:
    """A task × backend environment.

    Parameters
    ----------
    task:
        A :class:`~kstrata.tasks.base.Task`, a suite name or a task file path.
    backend:
        Backend name (``"pytorch"``, ``"triton-interp"``, ``"tvm-llvm"``, ...).
    secret:
        Per-run secret for the hidden tests; a fresh random one when None.
    reward:
        The reward schedule.
    max_steps:
        Steps per episode before ``done`` (None: never done).
    workers:
        Size of the worker pool (parallelism of :meth:`evaluate_many`).
    time_candidates:
        Time correct candidates (the speedup bonus needs it).
    preset:
        Integrity-check preset of the verifier.
    pool:
        A worker pool to share (not closed by :meth:`close`); default: an own
        pool of ``workers`` processes.
    timing:
        A :class:`kstrata.measure.timing.TimingConfig`
        (:func:`kstrata.serve.service.quick_timing` for rollouts at scale).
    timing_shape:
        The ``--timing-shape`` value candidates are timed at (``auto``: fitted
        on a CPU backend, nominal on a GPU, as ``kstrata eval`` times); the
        observation's contract and prompt name the shape.

    Raises
    ------
    kstrata.serve.service.ServeError
        For an unknown task or backend, or a backend that cannot run here.
    """

    def __init__(
        self,
        task: Task | str,
        backend: str,
        *,
        secret: str | None = None,
        reward: RewardConfig = RewardConfig(),
        max_steps: int | None = None,
        workers: int = 2,
        time_candidates: bool = True,
        preset: str = "strict",
        pool: WorkerPool | None = None,
        timing: Any = None,
        timing_shape: str = "auto",
    ):
        self.task = task if isinstance(task, Task) else load_task(task)
        self.backend = load_backend(backend)
        self.secret = secret or new_secret()
        self.reward = reward
        self.max_steps = max_steps
        self.time_candidates = time_candidates
        self.preset = preset
        self.timing = timing
        self.timing_shape = timing_shape
        self._owned = pool is None
        self.pool = pool or WorkerPool(
            size=max(1, workers), env=dict(getattr(self.backend, "worker_env", {}) or {})
        )
        self.steps = 0
        self.best_source: dict[str, str] | None = None
        self.best_speedup: float | None = None
        self._best_reward: float | None = None
        self._last: dict[str, Any] | None = None

    # -- episode -------------------------------------------------------------
    def reset(self) -> Observation:
        """Start an episode: the best source goes back to the backend's initial one."""
        self.steps = 0
        self._last = None
        self.best_speedup = None
        self._best_reward = None
        try:
            initial = self.backend.initial_sources(self.task)
        except NotImplementedError:
            initial = None
        # an initial candidate may embed the task file: show its public version
        public = public_source(self.task)
        self.best_source = None if initial is None else {
            lv: text.replace(self.task.source, public) for lv, text in initial.items()
        }
        return self.observation()

    def observation(self) -> Observation:
        """The current :class:`Observation`."""
        from kstrata.tasks.scaling import timing_shape_for

        timed = timing_shape_for(self.timing_shape, self.task, getattr(self.backend, "device", "cpu"))  # as timed
        contract = public_task(self.task, self.backend.levels, timed_shape=timed)
        return Observation(
            task=contract,
            backend=self.backend.name,
            levels=tuple(self.backend.levels),
            best_source=self.best_source,
            best_speedup=self.best_speedup,
            feedback=self._last,
            prompt=self._prompt(contract),
        )

    def _prompt(self, contract: dict[str, Any]) -> str:
        shapes = ", ".join(json.dumps(s["shape"]) for s in contract["public_shapes"])
        parts = [
            f"Task {contract['name']} (level {contract['level']}, {contract['category']}, "
            f"{contract['dtype']}). Write a faster implementation for backend "
            f"{self.backend.name!r} (levels: {', '.join(self.backend.levels)}).",
            "Reference (KernelBench format; your candidate defines the backend's entry point, "
            "e.g. ModelNew with the same constructor and forward signature):",
            contract["reference_source"],
            f"Public test shapes: {shapes}; nominal: {json.dumps(contract['nominal']['shape'])}; "
            f"timed at: {json.dumps(contract['timed']['shape'])}.",
            f"Tolerance: {contract['tolerance']['text']}.",
            "Hidden tests with other shapes, seeds and input distributions decide the verdict. "
            "Do not call the reference, cache outputs or fall back to another implementation: "
            "integrity checks reject that and it earns a negative reward.",
        ]
        if self.best_source:
            best = "\n".join(f"# --- level {lv}\n{text}" for lv, text in self.best_source.items())
            speed = f" (speedup {self.best_speedup:.3f}x)" if self.best_speedup else ""
            parts += [f"Current best candidate{speed}:", best]
        if self._last is not None:
            parts += ["Feedback on the last candidate:", json.dumps(self._last, indent=1, default=str)]
        return "\n\n".join(parts)

    # -- steps ---------------------------------------------------------------
    def _score(self, source: str | dict[str, str], level: str | None) -> tuple[StepResult, dict | None]:
        try:
            sources = candidate_sources(self.backend, source, level, base=None)
        except ServeError as e:
            r, parts = shaped_reward(FORMAT_ERROR, self.reward)
            return StepResult(r, FORMAT_ERROR, {"error": str(e), "reward_parts": parts}), None
        out: Outcome = evaluate(
            self.task, self.backend, sources, secret=self.secret, pool=self.pool,
            preset=self.preset, time_it=self.time_candidates, timing=self.timing,
            timing_shape=self.timing_shape,
        )
        r, parts = shaped_reward(
            out.verdict, self.reward, speedup=out.speedup, ci=out.speedup_ci, trusted=out.trusted
        )
        info = {"reward_parts": parts, "evaluation": out.public, "speedup": out.speedup}
        return StepResult(r, out.verdict, info), sources

    def _advance(self, result: StepResult, sources: dict | None) -> StepResult:
        self.steps += 1
        self._last = result.info.get("evaluation") or {"verdict": result.verdict, **result.info}
        if sources is not None and result.verdict == "correct" and (
            self._best_reward is None or result.reward > self._best_reward
        ):
            self._best_reward = result.reward
            self.best_source = sources
            self.best_speedup = result.info.get("speedup")
        result.done = self.max_steps is not None and self.steps >= self.max_steps
        return result

    def step(self, source: str | dict[str, str], level: str | None = None) -> StepResult:
        """Evaluate one candidate and advance the episode.

        Parameters
        ----------
        source:
            The candidate's text for ``level`` (default: the backend's main
            level), or ``{level: text}``.

        Returns
        -------
        StepResult
            Never raises for a bad candidate.
        """
        return self._advance(*self._score(source, level))

    def evaluate_many(self, sources: list[str | dict[str, str]], level: str | None = None) -> list[StepResult]:
        """Evaluate a group of candidates in parallel (one worker each, up to
        the pool size); results in the order given. Counts as one step per
        candidate; the best candidate is updated from the group.
        """
        if not sources:
            return []
        n = min(len(sources), self.pool.size)
        with ThreadPoolExecutor(max_workers=n, thread_name_prefix="kstrata-env") as threads:
            scored = list(threads.map(lambda s: self._score(s, level), sources))
        return [self._advance(result, srcs) for result, srcs in scored]

    # -- lifetime ------------------------------------------------------------
    def close(self) -> None:
        """Stop the worker pool (if this env made it)."""
        if self._owned:
            self.pool.close()

    def __enter__(self) -> "KernelEnv":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
