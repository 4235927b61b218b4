"""Which of a verdict's integrity checks rest on the candidate process's own word.

The harness that runs inside the candidate's process (:mod:`kstrata.sandbox.child`)
makes some checks there, because they must look inside it: launches counted
on the DSL's launcher, PyTorch operators seen by a dispatch mode, replaced
functions, threads left running, inputs written, outputs aliasing inputs.
Code that runs in that process can reach the harness (through ``gc``, by
popping a dispatch mode, by hiding a thread) and forge or suppress those
findings, so a verdict says which of its checks passed on such a report
(:func:`self_reported`). What the judge decides from outside the process
is not on that list: the outputs against the float64 oracle, two poison
patterns and the previous test's outputs, output dtypes and shapes as the
bytes arrived, timed calls' outputs, and, for :data:`CHURN_CHECKED`
backends, threads and processes that a call started and ended, and for
:data:`~kstrata.sandbox.client.SINGLE_THREADED` ones the threads a candidate
keeps (:class:`kstrata.sandbox.client.Churn`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstrata.sandbox.client import CHURN_CHECKED, SINGLE_THREADED

#: Checks whose passing rests on findings the candidate process sends.
REPORTED_CHECKS = ("kernel_launched", "kernel_does_work", "no_torch_compute", "no_runtime_patching",
                   "no_threads_left", "inputs_unchanged", "no_output_alias",
                   "output_reused")


def self_reported(backend_name: str, actions: Mapping[str, str]) -> dict[str, Any]:
    """The verdict's note on self-reported evidence (JSON).

    Parameters
    ----------
    backend_name:
        Registry name of the candidate's backend.
    actions:
        The integrity preset's action per check (``error``, ``warn``, ``off``).

    Returns
    -------
    dict
        ``checks``: the checks in force for this backend that passed on the
        candidate process's report (:data:`REPORTED_CHECKS`, less those that
        do not apply or are off); ``judged_outside``: what the judge counted
        itself from outside the process; ``message``: one sentence saying so.
    """
    from kstrata.verify.integrity.registry import applies

    checks = [c for c in REPORTED_CHECKS if applies(c, backend_name) and actions.get(c, "error") != "off"]
    outside = ["outputs against the float64 oracle"]
    if backend_name in CHURN_CHECKED:
        outside.append("threads and processes started and ended within a call")
    if backend_name in SINGLE_THREADED:
        outside.append("threads the candidate keeps in its process")
    return {"checks": checks, "judged_outside": outside,
            "message": ("these checks passed on findings sent by the candidate's own process, which code "
                        "running there can forge: " + ", ".join(checks)) if checks else ""}
