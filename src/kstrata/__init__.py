"""kstrata: LLM-driven kernel optimization with a verifier and timer you can trust.

The Python API (documented in :mod:`kstrata.api`; the CLI is a thin layer over it):

- ``kstrata.load_task(name_or_path)`` -> a task (suite name or KernelBench file);
- ``kstrata.evaluate(task, candidate, backend=None, ...)`` -> :class:`kstrata.api.EvalResult`
  (verdict, evidence, feedback, speedup over eager PyTorch);
- ``kstrata.optimize(task, backend="tvm-llvm", budget="evals=40", ...)`` -> a run result;
- ``kstrata.export(run_dir, to)`` -> a directory importable as a module with ``KernelModule``.

They are imported on first use, so ``import kstrata`` stays light.
"""

__version__ = "0.1.0"

import warnings as _warnings

# torch >= 2.10 warns when a pytree LeafSpec is unpickled (``copyreg``), which
# happens whenever a task or module crosses to a worker: a dependency's
# deprecation notice, not something a kstrata user can act on.
_warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)` is deprecated",
                         category=FutureWarning)
__all__ = ["evaluate", "export", "load_task", "optimize", "__version__"]


def __getattr__(name: str):
    if name in ("evaluate", "export", "load_task", "optimize", "EvalResult"):
        from kstrata import api

        return getattr(api, name)
    raise AttributeError(f"module 'kstrata' has no attribute {name!r}")
