"""The Backend protocol: how a candidate's sources become something callable.

A backend is a DSL plus a target (``tvm-llvm``, ``triton-interp``, ...). The
verifier and timer never import a DSL themselves: inside a worker process they
ask the backend to ``load`` a candidate for one shape and get back a callable
with the task ``Model.forward`` signature that takes and returns torch tensors.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from kstrata.backends.availability import Availability  # noqa: F401 (re-exported)
from kstrata.tasks.base import Task

#: The IR levels at which a candidate can be edited (DESIGN.md, "level").
LEVELS = ("graph", "schedule", "source")


class CandidateLoadError(Exception):
    """A candidate that does not build/import; becomes a ``compile_error`` verdict."""


class Backend(ABC):
    """A DSL and a target.

    Attributes
    ----------
    name:
        Registry name, e.g. ``"tvm-llvm"``.
    device:
        ``"cpu"`` or ``"cuda"``: where inputs and outputs live.
    levels:
        The levels a candidate of this backend has sources for.
    timing_meaningful:
        False where timings mean nothing (e.g. Triton's interpreter).
    level_kinds:
        What each level's text is, which decides the verifier's static checks:
        ``"python-torch"`` (PyTorch is the implementation language),
        ``"python-dsl"`` (Python host code around DSL kernels: torch compute
        forbidden), ``"python-ir"`` (Python that builds IR, e.g. TVMScript or a
        TensorIR schedule: no torch at all), ``"native"`` (C, CUDA, OpenCL or
        LLVM IR text), ``"data"`` (plans and parameters that are never executed).
    level_globals:
        Per level, the names its text runs with already bound (name -> dotted
        module path), e.g. ``tvm`` and ``T`` in a TVM schedule: the static
        checks read them as imports, so ``tvm.support.sys`` is seen as
        reaching ``sys`` whether or not the text imports ``tvm`` itself.
    level_preference:
        Which level a search asks first when a candidate's levels were asked
        equally often (the router's tie-break; ``None``: :attr:`levels` in order).
        ``SearchSettings.level_order`` overrides it.
    compiles_at_load:
        Whether :meth:`load` compiles the candidate's kernels for its shape
        inside the candidate's own code (TileLang: its first call JIT-compiles
        each shape's kernels, ~4 s a shape on the H200 host), so that the
        verifier's :mod:`kstrata.verify.warm_loads` pays off: a stage's loads
        run first in parallel processes of the same candidate, whose compiler
        caches the stage's process then finds.
    """

    name: str = ""
    device: str = "cpu"
    levels: tuple[str, ...] = ("source",)
    level_preference: tuple[str, ...] | None = None
    timing_meaningful: bool = True
    compiles_at_load: bool = False
    level_kinds: dict[str, str] = {"source": "python-dsl"}
    level_globals: dict[str, dict[str, str]] = {}

    @property
    def source_extensions(self) -> dict[str, str]:
        """The file extension of each level's file in a run folder (``best/``,
        ``candidates/<hash>/``) and an export: ``py`` for a level whose kind is
        Python (``python-dsl``, ``python-torch``, ``python-ir``), so that
        ``RUN/best/source.py`` of a Triton run opens as Python; a level not
        named here takes :data:`kstrata.store.artifacts.DEFAULT_EXTENSIONS`."""
        return {level: "py" for level, kind in self.level_kinds.items() if kind.startswith("python")}

    @abstractmethod
    def availability(self) -> Availability:
        """Whether this backend's libraries and device are present (no side effects)."""

    @abstractmethod
    def load(
        self, task: Task, sources: dict[str, str], shape: dict[str, int], init_inputs: list[Any]
    ) -> Callable[..., Any]:
        """Build ``sources`` for ``task`` at ``shape`` and return a callable.

        The callable takes the tensors of ``get_inputs()`` (on :attr:`device`)
        and returns the output tensor(s) like ``Model.forward``. Compilation
        happens here, never inside the returned callable.

        Raises
        ------
        CandidateLoadError
            When the sources do not compile/import or lack the expected entry point.
        """

    def set_poison(self, pattern: int) -> None:
        """Fill every buffer the callables this backend loaded allocate with a
        garbage pattern before use, from their next call on.

        The judge runs a test once under pattern 1 and once under pattern 2: a
        kernel that reads memory it never wrote (uninitialized partial sums,
        workspaces, outputs) then gives pattern-dependent output, which is
        ``incorrect``, instead of a verdict that depends on what the allocator
        happened to hand back.

        Parameters
        ----------
        pattern:
            ``0``: off (the default; no cost). ``1``: NaN for floating point,
            the dtype's maximum for integers. ``2``: a different value: a large
            finite number (1e30) for floating point, ``0x55`` bytes for
            integers.

        The base implementation does nothing (backends whose memory the
        verifier already poisons through PyTorch's allocator, e.g. Triton or
        TileLang outputs allocated with ``torch.empty``). TVM backends
        override it (:mod:`kstrata.backends.tvm.poison`).

        Raises
        ------
        ValueError
            For a pattern other than 0, 1 or 2 (in backends that implement it).
        """
        del pattern

    def set_program_order(self, seed: int | None) -> None:
        """From the next call on, run the programs (blocks) of each launch in
        an order drawn from ``seed`` (a non-negative int the judge derives
        from the run's secret, per test, for the second call of each test), or
        in the backend's own order for ``None``: a result that depends on the
        order of a launch's programs, which a GPU does not define, then
        differs between a test's two calls. The base implementation does
        nothing (a GPU, or a runtime that runs its blocks in an order the
        verifier does not choose); ``triton-interp`` implements it
        (:func:`kstrata.backends.triton.fidelity.shuffle_program_order`).

        Raises
        ------
        ValueError
            For a seed that is not a non-negative int (in backends that implement it).
        """
        del seed

    def prepare(self, task: Task, sources: dict[str, str], shapes: list[dict[str, int]]) -> dict[str, Any]:
        """Compile now, concurrently, what :meth:`load` will need at ``shapes``,
        so that the loads that follow find it built (the verifier sends each
        stage's shapes at the stage's start; kstrata.verify.runner).

        Never raises for a bad candidate and never changes what a load
        returns or raises: a build that fails here is not kept, and the
        load at that shape repeats it and reports its error as it would
        have. Everything started here has ended when it returns.

        Returns
        -------
        dict
            ``{"built": builds made, "failed": builds that failed, "workers":
            concurrent builds at most, "seconds": wall-clock seconds}``;
            the base implementation (backends that compile at their first
            call, or once for every shape) makes none.
        """
        del task, sources, shapes
        return {"built": 0, "failed": 0, "workers": 0, "seconds": 0.0}

    def level_empty(self, sources: dict[str, str], level: str) -> str | None:
        """Why ``level`` of a candidate with ``sources`` has nothing an edit
        there could change (``None``: something, or unknown; the default).
        Read from the text by pattern, never by running or parsing it; the
        agents skip such a level without a model call
        (:meth:`kstrata.agents.closed.ClosedLevels.observe_empty`)."""
        return None

    def level_context(self, task: Task, sources: dict[str, str], level: str) -> dict[str, str]:
        """Extra text an agent editing ``level`` needs, by level (e.g. the lowered
        loop nests a schedule refers to). Empty by default; never raises for a
        candidate that does not lower (the text then says why)."""
        return {}

    def initial_sources(self, task: Task) -> dict[str, str]:
        """Sources of a first, correct, untuned candidate for ``task``.

        Raises
        ------
        NotImplementedError
            When this backend has no automatic starting point for ``task``.
        """
        raise NotImplementedError(f"{self.name} has no initial candidate for {task.name}")
