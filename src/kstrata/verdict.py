"""Verdict kinds: the outcome of evaluating one candidate (DESIGN.md, "verdict")."""

from __future__ import annotations

from enum import Enum


class Verdict(str, Enum):
    """Result kind of evaluating a candidate.

    Exactly one applies, checked in this order: ``compile_error`` (the candidate
    did not build or import), ``rejected`` (an integrity check fired),
    ``timeout`` (a call exceeded the wall-clock limit), ``runtime_error`` (it
    raised, crashed or ran out of memory), ``incorrect`` (outputs outside the
    tolerance on some test), ``correct``.
    """

    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    INCORRECT = "incorrect"
    REJECTED = "rejected"
    CORRECT = "correct"

    def __str__(self) -> str:
        return self.value
