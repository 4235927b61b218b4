"""How every view words a speedup and its interval (no numpy: ``kstrata tree`` and
``show`` import this without the measurement stack)."""

from __future__ import annotations


def interval_verdict(low: float | None, high: float | None) -> str | None:
    """What a speedup's interval (baseline time / candidate time, the band
    between machines already in it) says: ``"a tie"`` when it holds 1 (README:
    not faster), ``"faster"`` when it lies above 1, ``"slower"`` below; None
    when no interval was measured."""
    if low is None or high is None:
        return None
    return "a tie" if low <= 1.0 <= high else ("faster" if low > 1.0 else "slower")


def speedup_text(value: float, low: float | None = None, high: float | None = None,
                 interval: bool = True) -> str:
    """A speedup as every view shows it: ``"1.5x [1.2, 1.9]"`` (``interval``
    False: ``"1.5x"``), with ``" (a tie: not faster)"`` appended when its
    interval holds 1 and ``" (slower)"`` when it lies below, whether or not the
    interval is shown (newcomer nc16: a best "1.16x [0.977, 1.37]" was shown
    and exported as a speedup, where ``eval`` called it a tie)."""
    ci = f" [{low:.3g}, {high:.3g}]" if interval and low is not None and high is not None else ""
    word = interval_verdict(low, high)
    mark = " (a tie: not faster)" if word == "a tie" else " (slower)" if word == "slower" else ""
    return f"{value:.3g}x{ci}{mark}"
