"""Named integrity checks and the presets that decide which of them reject.

Like KernelBench's ``kernel_static_checker.py``: every check has a name, a
stage (``static``: on the candidate's AST before anything runs; ``dynamic``:
while the verifier runs it) and a description; a preset maps each name to
``"error"`` (the candidate is rejected) or ``"warn"`` (reported, not fatal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Stage = Literal["static", "dynamic"]
Action = Literal["error", "warn", "off"]


@dataclass(frozen=True)
class Check:
    """A named integrity check.

    ``dsl_only`` checks apply only to backends whose DSL is not PyTorch itself
    (for the ``pytorch`` backend torch ops *are* the implementation).
    """

    name: str
    stage: Stage
    description: str
    dsl_only: bool = False


@dataclass
class Finding:
    """One check firing: its name, a one-line message and JSON-able evidence."""

    check: str
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "message": self.message, "evidence": self.evidence}


CHECKS: dict[str, Check] = {c.name: c for c in (
    Check("no_reference_call", "static",
          "does not call the task's reference Model or import kstrata/the task module"),
    Check("no_torch_compute", "static",
          "outside __init__, no torch.nn.functional / ATen compute op or @ in a DSL candidate; "
          "allocation, views and metadata are allowed", dsl_only=True),
    Check("no_foreign_libraries", "static",
          "imports only torch, triton and small standard-library helpers (no numpy, scipy, cupy, ...); "
          "DSL host code does not reach NumPy through a tensor either (.numpy(), __array__, tolist, "
          "torch.from_numpy, DLPack)"),
    Check("no_exception_fallback", "static", "no try/except (a failing kernel may not fall back)"),
    Check("no_file_io", "static", "no open(), os, pathlib, shutil, io, tempfile"),
    Check("no_network", "static", "no socket, urllib, http, requests"),
    Check("no_subprocess", "static", "no subprocess, multiprocessing, os.system"),
    Check("no_threads", "static", "no threading, _thread, concurrent.futures, asyncio"),
    Check("no_side_streams", "static", "no torch.cuda.Stream / stream switching / record_stream"),
    Check("no_monkey_patching", "static",
          "no assignment to attributes of torch, triton, time, math or kstrata, no setattr on them"),
    Check("no_introspection", "static",
          "no __import__, eval/exec/compile, globals/locals/vars, getattr on modules, gc, "
          "inspect, sys, ctypes, frames or dunder attribute tricks"),
    Check("no_private_api", "static",
          "does not reach a library's private machinery (a name with a leading underscore: torch._C, "
          "torch._dynamo, ...; written as an attribute, an import or a string for getattr/import_module), "
          "nor a module through another module's attribute (torch.cuda.os, torch._dynamo.utils.torch): "
          "there lie the switches of what kstrata records in the candidate's process (dispatch and "
          "function modes, launch counts); an error in every preset"),
    Check("no_mode_probe", "static",
          "does not read what the harness sets around checked calls only (deterministic algorithms, "
          "uninitialized-memory fill, dispatch and function modes): a candidate that can tell a checked "
          "call from a timed one can be verified computing one thing and timed computing another"),
    Check("no_precision_downgrade", "static",
          "no TF32 or fp16/bf16 compute the task does not allow (incl. a tl.dot at plain TF32, its default, "
          "on an fp32 task: pass input_precision='ieee' or 'tf32x3')"),
    Check("output_type", "dynamic",
          "every output is a plain torch.Tensor (no subclass) of the reference's dtype, shape, device"),
    Check("output_layout", "dynamic",
          "every output has the reference output's memory layout (its strides, dims of size 1 aside), "
          "or is contiguous where the reference's is not; read from the bytes as they arrive "
          "(kstrata.verify.layout), not from the candidate's word"),
    Check("no_output_alias", "dynamic", "outputs do not share memory with inputs"),
    Check("inputs_unchanged", "dynamic", "inputs are bit-identical after the call"),
    Check("output_reused", "dynamic",
          "no output is returned in the memory of an earlier call's output that is still alive (a result the "
          "caller holds is never overwritten by a later call)"),
    Check("kernel_launched", "dynamic", "a DSL kernel is launched on every call", dsl_only=True),
    Check("kernel_does_work", "dynamic",
          "replacing every kernel launch by a no-op makes the output wrong", dsl_only=True),
    Check("no_caching", "dynamic",
          "new values in the same input buffers give new outputs (no result cached across calls)"),
    Check("no_threads_left", "dynamic", "no thread started by the candidate is still running"),
    Check("no_runtime_patching", "dynamic",
          "torch, timers, triton and kstrata functions are the same objects after the call"),
    Check("no_reference_at_runtime", "dynamic", "the reference Model.forward is not entered by the candidate"),
    Check("timed_output", "dynamic",
          "outputs of timed calls (the first, the last and a random share, chosen after each call "
          "returned) match the oracle of their input copy"),
    Check("protocol", "dynamic",
          "the candidate process answers the judge in the wire format (its harness is intact)"),
)}

_WARN_SOFT = ("no_exception_fallback", "no_precision_downgrade", "no_foreign_libraries", "no_introspection",
              "no_mode_probe")

PRESETS: dict[str, dict[str, Action]] = {
    "strict": {name: "error" for name in CHECKS},
    "warn": {name: ("warn" if name in _WARN_SOFT else "error") for name in CHECKS},
}


class UnknownPresetError(ValueError):
    """A preset name that does not exist."""


def preset(name: str) -> dict[str, Action]:
    """The action per check of preset ``name`` (``strict`` or ``warn``).

    Raises
    ------
    UnknownPresetError
        For another name.
    """
    if name not in PRESETS:
        raise UnknownPresetError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return PRESETS[name]


def applies(check: str, backend_name: str) -> bool:
    """Whether ``check`` applies to candidates of ``backend_name``."""
    return not (CHECKS[check].dsl_only and backend_name in ("pytorch", "pytorch-cuda"))
