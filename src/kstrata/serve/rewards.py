"""Shaped rewards for RL on kernels: compile, correctness, speedup.

The shaping follows the recipe of the kernel-RL papers (AutoTriton, Li et al.
2025; TritonRL, Woo et al. 2025; Kevin-32B, Baronio et al. 2025): a small graded term for getting as far
as building and running, a unit term for passing the verifier, and a bonus
that grows with the logarithm of the speedup, so that a 2x and a 4x kernel are
one step apart rather than a factor of two. As in those papers, a candidate
that cheats is never paid: an integrity-check failure (``rejected``) scores at
or below a candidate that does not even compile, and never above zero.

Default schedule (``RewardConfig()``)::

    verdict          reward
    -------------    -------------------------------------------------
    rejected         -1.0             (<= compile_error, <= 0: enforced)
    format_error      0.0             (empty source, missing level)
    compile_error     0.0
    timeout           0.1
    runtime_error     0.1
    incorrect         0.2
    correct           1.0 + 0.5 * clip(log2(speedup), -1, 3)   in [0.5, 2.5]

The speedup term is used only when a trustworthy speedup exists: the backend's
timings mean something (not an interpreter), the measurement is not flagged
``suspicious`` (faster than the roofline floor) and, with
``significant_only=True``, its confidence interval excludes 1.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from kstrata.verdict import Verdict

#: A pseudo-verdict for input that never reached the backend (empty source,
#: missing level); not a :class:`~kstrata.verdict.Verdict` kind.
FORMAT_ERROR = "format_error"


@dataclass(frozen=True)
class RewardConfig:
    """The reward of each outcome (see the module docstring for the schedule).

    Attributes
    ----------
    rejected, format_error, compile_error, timeout, runtime_error, incorrect, correct:
        Reward per verdict kind (dimensionless).
    speedup_weight:
        Weight of the ``log2(speedup)`` bonus added to ``correct``.
    log2_min, log2_max:
        Clip range of ``log2(speedup)``; the defaults cap the bonus at 8x and
        the penalty at 2x slower.
    significant_only:
        Pay the bonus only when the speedup's confidence interval excludes 1.

    Raises
    ------
    ValueError
        When ``rejected`` is positive or above ``compile_error`` (a cheat must
        never pay better than a build failure), when ``log2_min > log2_max``, or
        when the worst correct reward is not above ``incorrect``.
    """

    rejected: float = -1.0
    format_error: float = 0.0
    compile_error: float = 0.0
    timeout: float = 0.1
    runtime_error: float = 0.1
    incorrect: float = 0.2
    correct: float = 1.0
    speedup_weight: float = 0.5
    log2_min: float = -1.0
    log2_max: float = 3.0
    significant_only: bool = False

    def __post_init__(self) -> None:
        if self.rejected > 0 or self.rejected > self.compile_error:
            raise ValueError(
                f"RewardConfig.rejected={self.rejected} must be <= 0 and <= compile_error="
                f"{self.compile_error}: an integrity failure may never pay better than a build failure"
            )
        if self.log2_min > self.log2_max:
            raise ValueError(f"log2_min={self.log2_min} exceeds log2_max={self.log2_max}")
        worst = self.correct + self.speedup_weight * min(self.log2_min, 0.0)
        if worst <= self.incorrect:
            raise ValueError(
                f"the slowest correct candidate would get {worst}, not more than incorrect="
                f"{self.incorrect}; raise correct or log2_min, or lower speedup_weight"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def speedup_bonus(
    speedup: float | None,
    config: RewardConfig,
    *,
    ci: tuple[float | None, float | None] | None = None,
    trusted: bool = True,
) -> float:
    """``speedup_weight * clip(log2(speedup), log2_min, log2_max)``, or 0.

    Parameters
    ----------
    speedup:
        Baseline time / candidate time (dimensionless), or None if not timed.
    ci:
        ``(low, high)`` confidence bounds of the speedup, used by
        ``significant_only``.
    trusted:
        False when the timing must not be paid (interpreter backend, a
        measurement flagged suspicious); the bonus is then 0.
    """
    if not trusted or speedup is None or not math.isfinite(speedup) or speedup <= 0:
        return 0.0
    if config.significant_only:
        low, high = ci or (None, None)
        if low is None or high is None or (low <= 1.0 <= high):
            return 0.0
    log = min(max(math.log2(speedup), config.log2_min), config.log2_max)
    return config.speedup_weight * log


def shaped_reward(
    verdict: Verdict | str,
    config: RewardConfig,
    *,
    speedup: float | None = None,
    ci: tuple[float | None, float | None] | None = None,
    trusted: bool = True,
) -> tuple[float, dict[str, float]]:
    """The reward of one evaluated candidate, and its parts.

    Parameters
    ----------
    verdict:
        A :class:`~kstrata.verdict.Verdict` kind or :data:`FORMAT_ERROR`.
    speedup, ci, trusted:
        See :func:`speedup_bonus`; ignored unless the verdict is ``correct``.

    Returns
    -------
    (reward, parts)
        ``parts`` is ``{"base": ..., "speedup_bonus": ...}`` (they sum to reward).

    Raises
    ------
    ValueError
        For an unknown verdict string.
    """
    kind = str(verdict)
    if kind == FORMAT_ERROR:
        base = config.format_error
    else:
        try:
            kind = Verdict(kind).value
        except ValueError:
            raise ValueError(
                f"unknown verdict {verdict!r}; expected one of "
                f"{[v.value for v in Verdict] + [FORMAT_ERROR]}"
            ) from None
        base = getattr(config, kind)
    bonus = speedup_bonus(speedup, config, ci=ci, trusted=trusted) if kind == "correct" else 0.0
    return base + bonus, {"base": base, "speedup_bonus": bonus}
