"""Triton backends: ``triton`` (CUDA) and ``triton-interp`` (CPU, ``TRITON_INTERPRET=1``).

A Triton candidate is a KernelBench-format file: ``ModelNew`` with the task
``Model``'s constructor and ``forward`` signature, whose forward launches
``@triton.jit`` kernels defined in the same file. The interpreter runs kernels
with NumPy on CPU: correct semantics (masks, program ids, ``tl.dot`` at the
precision a GPU runs it; programs run one by one, in grid order or, on the
judge's second call of a test, in an order drawn from the run's secret; a
launch whose programs race, wait for one another, or read or write outside
its tensors, fails:
:mod:`kstrata.backends.triton.fidelity`), timings meaningless.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from kstrata import kernels
from kstrata.backends.base import Availability, Backend, CandidateLoadError
from kstrata.backends.pytorch import load_model_new
from kstrata.backends.triton import fidelity, hooks, libdevice, masked_other
from kstrata.tasks.base import Task


def _triton_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("triton")
    except Exception:  # noqa: BLE001 - not installed
        return None


class TritonBackend(Backend):
    """Triton kernels compiled for an NVIDIA GPU."""

    name = "triton"
    device = "cuda"
    levels = ("source",)
    #: launch hooks for the verifier's dynamic checks
    launch_hooks = hooks
    #: environment a worker process needs
    worker_env: dict[str, str] = {}

    def availability(self) -> Availability:
        v = _triton_version()
        if v is None:
            return Availability(False, "triton is not installed (pip install triton)")
        import torch

        if self.device == "cuda" and not torch.cuda.is_available():
            return Availability(False, "no CUDA device (use triton-interp on CPU)", (("triton", v),))
        return Availability(True, "", (("triton", v), ("torch", torch.__version__)))

    def load(self, task: Task, sources: dict[str, str], shape: dict[str, int],
             init_inputs: list[Any]) -> Callable[..., Any]:
        if "source" not in sources:
            raise CandidateLoadError(f"{self.name} candidate needs a 'source' level")
        if _triton_version() is None:
            raise CandidateLoadError("triton is not installed")
        self._prepare()
        return load_model_new(sources["source"], init_inputs, self.device, shape)

    def _prepare(self) -> None:
        """Set up the process before the candidate module is imported."""

    def initial_sources(self, task: Task) -> dict[str, str]:
        """The shipped ``kernels/triton/<task>.py`` as the ``source`` level.

        Raises
        ------
        NotImplementedError
            When no Triton initial candidate ships for ``task`` (start from a
            file of your own with ``kstrata optimize --initial FILE``).
        """
        text = kernels.initial_source("triton", task.name)
        if text is None:
            raise NotImplementedError(
                f"{self.name} has no shipped initial candidate for {task.name}; "
                "start from your own kernel file with --initial FILE")
        return {"source": text}


class TritonInterpBackend(TritonBackend):
    """Triton kernels run by Triton's interpreter on CPU (``TRITON_INTERPRET=1``)."""

    name = "triton-interp"
    device = "cpu"
    timing_meaningful = False
    worker_env = {"TRITON_INTERPRET": "1"}

    def _prepare(self) -> None:
        # triton.jit reads the knob when a kernel is decorated, i.e. at import
        os.environ["TRITON_INTERPRET"] = "1"
        # a float32 tl.dot at TF32 (its default) computes as the GPU does, not in full float32
        fidelity.model_gpu_dot_precision()
        # programs of one launch that race (the interpreter runs them one by one, in grid order) fail it
        fidelity.watch_races()
        # triton.autotune benchmarks through a driver the interpreter lacks: it draws a config instead
        fidelity.interpret_autotune()
        # libdevice's math functions are stubs there (None, or extern_elementwise not supported)
        libdevice.interpret_libdevice()

    def set_poison(self, pattern: int) -> None:
        """See :meth:`Backend.set_poison`. The interpreter: besides the
        ``torch.empty`` poison every backend gets, the masked-out lanes of a
        ``tl.load`` without ``other`` (undefined on a GPU, zeros in the
        interpreter) hold the pattern (:mod:`kstrata.backends.triton.masked_other`).

        Raises
        ------
        ValueError
            For a pattern other than 0, 1 or 2.
        """
        masked_other.set_pattern(pattern)

    def set_program_order(self, seed: int | None) -> None:
        """See :meth:`Backend.set_program_order`: each interpreted launch runs
        its programs in an order drawn from ``seed``
        (:func:`kstrata.backends.triton.fidelity.shuffle_program_order`), or in
        grid order for ``None``.

        Raises
        ------
        ValueError
            For a seed that is not a non-negative int.
        """
        fidelity.shuffle_program_order(seed)
