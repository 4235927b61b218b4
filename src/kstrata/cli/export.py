"""``kstrata export RUN --to DIR``: the best kernel of a run as an importable module.

``DIR`` becomes a Python package a model can import::

    import sys; sys.path.insert(0, "path/to/parent-of-DIR")
    from DIR import KernelModule          # a torch.nn.Module
    layer = KernelModule()                # weights drawn as the task's Model draws them
    y = layer(x)

What is written, per backend:

- ``tvm-llvm``/``tvm-cuda``: ``kernel.so`` (the compiled library, built in a
  sandboxed process by :func:`kstrata.backends.tvm.export.build_library`),
  ``plan.json`` (kernel order and buffers), ``__init__.py`` (loader and
  ``KernelModule``, which runs the kernels through
  :class:`kstrata.backends.tvm.runtime.PlanRunner`; needs kstrata and TVM).
- ``pytorch``/``triton``/``tilelang-*``: ``candidate.py`` (the candidate's
  file, as text) and ``__init__.py`` (``KernelModule`` is its ``ModelNew``).

Always: ``task.py`` (the task's reference, for its ``Model`` and
``get_init_inputs``), ``export.json`` (task, backend, candidate hash, shape,
speedups) and the candidate's level files under ``sources/``. kstrata's
process writes text and bytes only; it never imports the candidate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from kstrata.cli.errors import OptionError, user_errors

console = Console()

_COMMON = '''"""{title}

Exported by ``kstrata export`` from run {run} (candidate {hash}).
``KernelModule(*init_inputs)`` takes the task Model's constructor arguments
(default: ``task.get_init_inputs()``); ``KernelModule.from_model(model)`` takes
the weights of an existing ``Model`` instance.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
META = json.loads((HERE / "export.json").read_text())


def _load(name: str, path: Path):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def task_module():
    """The task's reference module (``Model``, ``get_inputs``, ``get_init_inputs``;
    loaded once: set its size globals to change the shape its functions use)."""
    return _load(f"{{__name__}}._task", HERE / "task.py")
'''

_TVM = _COMMON + '''

def load_kernel(params, device=None):
    """A callable ``(*inputs) -> output`` over the compiled kernels of ``kernel.so``,
    with ``params`` (tensors in ``META["params"]`` order) bound after the inputs."""
    import tvm

    from kstrata.backends.tvm.lower import Plan
    from kstrata.backends.tvm.runtime import PlanRunner

    lib = tvm.runtime.load_module(str(HERE / "kernel.so"))
    plan = Plan.from_json((HERE / "plan.json").read_text())
    return PlanRunner(plan, lambda name: lib[name], list(params), device or META["device"])


class KernelModule(torch.nn.Module):
    """The exported kernel as a ``torch.nn.Module`` (same ``forward`` signature as the task's Model)."""

    def __init__(self, *init_inputs, model=None):
        super().__init__()
        if model is None:
            task = task_module()
            model = task.Model(*(init_inputs or task.get_init_inputs()))
        self.model = model.eval()  # holds the weights; its forward is not used
        self._runner = None

    @classmethod
    def from_model(cls, model):
        return cls(model=model)

    def forward(self, *inputs):
        if self._runner is None:
            state = dict(self.model.named_parameters())
            state.update(dict(self.model.named_buffers()))
            self._runner = load_kernel([state[n].detach() for n in META["params"]])
        return self._runner(*inputs)
'''

_FILE = _COMMON + '''

def candidate_module():
    """The candidate's module (defines ``ModelNew``)."""
    return _load(f"{{__name__}}._candidate", HERE / "candidate.py")


class KernelModule(torch.nn.Module):
    """The exported kernel as a ``torch.nn.Module`` wrapping the candidate's ``ModelNew``."""

    def __init__(self, *init_inputs, model=None):
        super().__init__()
        if model is None:
            init_inputs = init_inputs or task_module().get_init_inputs()
            self.impl = candidate_module().ModelNew(*init_inputs)
        else:
            task = task_module()
            self.impl = candidate_module().ModelNew(*task.get_init_inputs())
            self.impl.load_state_dict(model.state_dict())

    @classmethod
    def from_model(cls, model):
        return cls(model=model)

    def forward(self, *inputs):
        return self.impl(*inputs)
'''


def export_run(run_dir: str | Path, to: str | Path, candidate: str | None = None) -> Path:
    """Write the best candidate of ``run_dir`` (or ``candidate``, a hash prefix)
    into ``to`` as an importable package (see the module docstring).

    Returns
    -------
    Path
        ``to``.

    Raises
    ------
    kstrata.store.StoreError
        If ``run_dir`` holds no run or ``candidate`` matches none or several.
    OptionError
        If the run has no correct candidate, the named one is not correct,
        ``to`` is a non-empty directory that is not an earlier export, or the
        backend has nothing to export.
    kstrata.sandbox.IsolatedCallError
        If the sandboxed TVM build fails.
    """
    from kstrata.cli.retime import open_run
    from kstrata.search.tree import CandidateTree
    from kstrata.store import artifacts
    from kstrata.store.run_store import RunStore

    info = open_run(run_dir)
    to = Path(to)
    if to.exists() and any(to.iterdir()) and not (to / "export.json").is_file():
        raise OptionError(f"--to {to}: a non-empty directory that is not a kstrata export; choose another")
    with RunStore.open(info.run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
        if candidate is not None:
            node = tree[store.resolve(candidate)]
            if not node.correct:
                raise OptionError(f"candidate {node.hash[:12]} is {node.verdict or 'pending'}; export a correct one")
        else:
            node = tree.best_correct()
            if node is None:
                raise OptionError(f"{info.run_dir} has no correct candidate to export")
        sources = store.sources(node.hash)
    name, b = info.backend.name, info.backend
    meta: dict[str, Any] = {
        "task": info.task.name, "backend": name, "candidate": node.hash, "run": str(info.run_dir),
        "device": b.device, "speedups": [s.__dict__ for s in node.measurement.speedups] if node.measurement else [],
        "timing_trusted": node.timing_trusted,
    }
    files: dict[str, str | bytes] = {"task.py": info.task.source}
    ext = dict(getattr(b, "source_extensions", {}) or {})
    for level, text in sources.items():
        files[f"sources/{artifacts.source_name(level, ext)}"] = text
    title = f"{info.task.name} on {name}: the kernel kstrata exported"
    fill = {"title": title, "run": info.run_dir, "hash": node.hash[:12]}
    if name.startswith("tvm-"):
        from kstrata.backends.tvm.export import build_library

        try:
            built = build_library(info.task, sources, name, info.task.full_shape(info.task.nominal_shape))
        except ValueError as e:
            raise OptionError(str(e)) from None
        files["kernel.so"], files["plan.json"] = built["library"], built["plan"]
        meta.update(params=built["params"], shape=built["shape"], symbolic=built["symbolic"])
        files["__init__.py"] = _TVM.format(**fill)
    elif "source" in sources:
        text = sources["source"]
        if name.startswith("tilelang"):
            from kstrata.backends.tilelang.backend import compose_source

            text = compose_source(sources)
        files["candidate.py"], files["__init__.py"] = text, _FILE.format(**fill)
    else:
        raise OptionError(f"nothing to export for backend {name} (no source level)")
    files["export.json"] = json.dumps(meta, indent=2, default=str) + "\n"
    for rel, data in files.items():
        path = to / rel
        if isinstance(data, bytes):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        else:
            artifacts.write_atomic(path, data)
    return to


def register(app: typer.Typer) -> None:
    """Add the ``export`` command to ``app``."""

    @app.command("export")
    def export_cmd(
        run_dir: Path = typer.Argument(..., help="A run directory."),
        to: Path = typer.Option(..., "--to", help="Directory to write the package into (created)."),
        candidate: str | None = typer.Option(None, "--candidate", help="A candidate hash or prefix (default: the best)."),
    ) -> None:
        """Write the run's best kernel as an importable module (KernelModule, a torch.nn.Module)."""
        from kstrata.sandbox import IsolatedCallError

        with user_errors():
            try:
                out = export_run(run_dir, to, candidate)
            except IsolatedCallError as e:
                raise OptionError(f"export failed: {e}") from None
        console.print(f"exported to {out}; use it with:\n  import sys; sys.path.insert(0, {str(out.resolve().parent)!r})\n"
                      f"  from {out.name} import KernelModule\n  layer = KernelModule()  # then layer(*inputs)",
                      highlight=False, markup=False)
