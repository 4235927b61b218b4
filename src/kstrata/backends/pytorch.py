"""``pytorch`` backend: a KernelBench-style candidate file defining ``ModelNew``.

The candidate is a Python module with ``ModelNew(torch.nn.Module)`` taking the
task ``Model``'s constructor arguments and ``forward`` signature (KernelBench
format). It runs on CPU here; it is also the loader the ``triton`` backends
build on, since a Triton candidate is the same kind of file with
``@triton.jit`` kernels in it.
"""

from __future__ import annotations

import atexit
import contextlib
import linecache
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from kstrata.backends.base import Availability, Backend, CandidateLoadError
from kstrata.tasks.base import Task, TaskError, import_module_from_path


_private_dir: str | None = None


def _candidate_dir() -> str:
    """This process's private directory for candidate files (mode 0700, made by
    :func:`tempfile.mkdtemp` under the temp dir, which in a pool worker lies
    inside the pool's own directory, removed by ``WorkerPool.close``); removed
    at exit when empty."""
    global _private_dir
    if _private_dir is None or not os.path.isdir(_private_dir):
        _private_dir = tempfile.mkdtemp(prefix=f"kstrata-cand-{os.getpid()}-")
        atexit.register(_remove_dir, _private_dir)
    return _private_dir


def _remove_dir(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass


def load_model_new(source: str, init_inputs: list[Any], device: str = "cpu",
                   shape: dict[str, int] | None = None) -> torch.nn.Module:
    """Import ``source`` from a temporary file and construct ``ModelNew(*init_inputs)``.

    With ``shape`` (the test's sizes), the module's globals of those names
    are rebound first, as the reference's are
    (:func:`kstrata.tasks.base.rebind_globals`, leniently): a constructor that
    reads a size global (KernelBench's VanillaRNN keeps ``torch.randn(
    (batch_size, hidden_size))``) sees the test's size, not the nominal one.

    The caller seeds torch's RNG beforehand so the candidate's parameters match
    the reference's (same seed, same construction order, as in KernelBench).

    The file lives in a private directory of this process and is deleted as
    soon as the module is imported; its text stays in :mod:`linecache`, which
    is where :mod:`inspect` (Triton's JIT at decoration, its interpreter at each
    launch) and tracebacks read a module's source, so nothing needs the file
    afterwards and no candidate's source is left on disk, even when the
    process is killed.

    Raises
    ------
    CandidateLoadError
        If the source does not import, lacks ``ModelNew``, or its constructor raises.
    """
    fd, name = tempfile.mkstemp(prefix="cand_", suffix=".py", dir=_candidate_dir())
    try:
        with os.fdopen(fd, "w") as f:
            f.write(source)
        # lines with no mtime are never re-read or dropped by linecache.checkcache
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        try:
            module = import_module_from_path(Path(name), prefix="kstrata_candidate")
        except TaskError as e:
            raise CandidateLoadError(str(e).replace(name, "<candidate>")) from e
    finally:
        with contextlib.suppress(FileNotFoundError):  # the candidate may have removed it
            os.unlink(name)
    if shape:
        from kstrata.tasks.base import rebind_globals
        from kstrata.tasks.dims import split_shape

        try:
            rebind_globals(module, source, split_shape(shape)[0], "<candidate>", lenient=True)
        except Exception as e:  # noqa: BLE001 - a candidate bug is data
            raise CandidateLoadError(f"rebinding the candidate's size globals raised {type(e).__name__}: {e}") from e
    if not hasattr(module, "ModelNew"):
        raise CandidateLoadError("candidate defines no ModelNew(torch.nn.Module)")
    try:
        model = module.ModelNew(*init_inputs)
    except Exception as e:  # noqa: BLE001 - a candidate bug is data
        raise CandidateLoadError(f"ModelNew(*init_inputs) raised {type(e).__name__}: {e}") from e
    if isinstance(model, torch.nn.Module):
        model = model.to(device).eval()
    return model


class PyTorchBackend(Backend):
    """Candidates written in PyTorch (``ModelNew``), run on CPU."""

    name = "pytorch"
    device = "cpu"
    levels = ("source",)
    level_kinds = {"source": "python-torch"}

    def availability(self) -> Availability:
        return Availability(True, "", (("torch", torch.__version__),))

    def load(
        self, task: Task, sources: dict[str, str], shape: dict[str, int], init_inputs: list[Any]
    ) -> Callable[..., Any]:
        if "source" not in sources:
            raise CandidateLoadError("pytorch candidate needs a 'source' level")
        return load_model_new(sources["source"], init_inputs, self.device, shape)

    def initial_sources(self, task: Task) -> dict[str, str]:
        """The reference itself, renamed: ``class ModelNew(Model)``."""
        return {"source": task.source + "\n\nclass ModelNew(Model):\n    pass\n"}
