"""The TileLang backends and their candidate contract.

A TileLang candidate is a KernelBench-format Python file (level ``source``):

* one or more kernel factories decorated with ``@tilelang.jit(out_idx=...)``
  returning a ``@T.prim_func`` — written **without** a ``target=`` argument:
  the backend chooses the target through ``TILELANG_DEFAULT_TARGET``
  (``"c"`` for ``tilelang-c``, ``"cuda"`` for ``tilelang-cuda``);
* an optional module global ``SCHEDULE = {...}`` (a JSON-able dict of block
  sizes, ``num_stages``, ``threads`` ...) that the factories read their tunable
  parameters from at call time;
* ``class ModelNew(torch.nn.Module)`` with the task ``Model``'s constructor
  arguments and ``forward`` signature, calling the compiled kernels.

The other levels of a candidate:

* ``schedule`` (optional): a JSON object whose keys override ``SCHEDULE`` —
  the parameter layer that TileLang's autotuner/Carver (or an agent) edits
  without touching the kernel text;
* ``graph`` (optional): a plain-text fusion plan (which ops go into which
  kernel), kept for agents and reports; the ``source`` level implements it and
  nothing executes it.

On TileLang 0.1.15's C target, loops must be ``T.serial``/``T.grid`` and
``threads=1`` (``T.Parallel``, fragments and ``T.gemm`` do not lower there);
see ``tests/backends/test_tilelang.py`` for what was checked. So the shipped
initial candidates come in two forms: ``kernels/tilelang`` (that loop form,
for ``tilelang-c``) and ``kernels/tilelang_cuda`` (GPU form, for
``tilelang-cuda``, which falls back to the loop form for a task without one);
see :mod:`kstrata.kernels`.

Blocks of one kernel may not store to one element of a parameter with plain
stores (a split reduction must use ``T.atomic_add``): the C target runs
blocks one after another, so such a race would read correct there; a
kernel's first call reads its program and raises
:class:`kstrata.backends.tilelang.races.BlockRace` instead.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import re
from collections.abc import Callable
from typing import Any

from kstrata import kernels
from kstrata.backends import envs
from kstrata.backends.base import Availability, Backend, CandidateLoadError
from kstrata.backends.tilelang import autotune, hooks, races
from kstrata.backends.tilelang.compiler_errors import compiler_output, with_compiler_errors
from kstrata.backends.pytorch import load_model_new
from kstrata.pysyntax import parse_module
from kstrata.tasks.base import Task

SCHEDULE_MARK = "# --- schedule level (added by kstrata) ---"


def compose_source(sources: dict[str, str]) -> str:
    """The module text that runs: ``source`` plus the ``schedule`` overrides.

    Raises
    ------
    CandidateLoadError
        Without a ``source`` level, or when ``schedule`` is not a JSON object.
    """
    if "source" not in sources:
        raise CandidateLoadError("a TileLang candidate needs a 'source' level (the Python file)")
    text = sources["source"]
    sched = sources.get("schedule", "").strip()
    if not sched:
        return text
    try:
        overrides = json.loads(sched)
    except ValueError as e:
        raise CandidateLoadError(f"schedule level is not JSON: {e}") from e
    if not isinstance(overrides, dict):
        raise CandidateLoadError("schedule level must be a JSON object of parameter overrides")
    return (f"{text.rstrip()}\n\n{SCHEDULE_MARK}\n"
            f"SCHEDULE = {{**globals().get('SCHEDULE', {{}}), **{overrides!r}}}\n")


def schedule_defaults(source: str) -> dict[str, Any]:
    """The literal ``SCHEDULE = {...}`` of ``source`` (empty when absent or not literal)."""
    try:
        tree = parse_module(source)
    except SyntaxError:
        return {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "SCHEDULE"):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}


#: the module docstring at the top of a file (after comments and blank lines)
_DOCSTRING = re.compile(r'\A(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*[rRuU]?("""|\'\'\')(?P<doc>.*?)\1', re.S)


def graph_plan(source: str) -> str:
    """The fusion plan of a candidate: its module docstring, cleaned as
    ``ast.get_docstring`` cleans it (``""`` without one). Found by pattern, so
    a user's kernel file is never parsed in kstrata's process."""
    doc = _DOCSTRING.match(source)
    return inspect.cleandoc(doc.group("doc")) if doc else ""


#: a key read from ``SCHEDULE`` (``SCHEDULE["lanes"]``, ``SCHEDULE.get("lanes", 16)``)
_SCHEDULE_READ = re.compile(r"""\bSCHEDULE(?:\[\s*|\.get\(\s*)["'](\w+)["']""")
#: the source's own ``SCHEDULE = {...}`` line (one line: shown verbatim, never evaluated)
_SCHEDULE_LINE = re.compile(r"^SCHEDULE[ \t]*=[ \t]*\{[^\n]*$", re.MULTILINE)
#: a key set in a JSON or dict literal (``"lanes": 16``)
_SET_KEY = re.compile(r"""["'](\w+)["']\s*:""")


def schedule_keys_note(backend: str, sources: dict[str, str]) -> str:
    """What the ``schedule`` level (JSON overrides of ``SCHEDULE``) can change
    in ``sources``: the keys the current source reads, its own ``SCHEDULE``
    line, which keys the JSON sets that the source never reads, and on the C
    target that ``threads`` changes nothing (queue round: the level showed
    ``{"threads": 1}`` while the source read ``threads`` and ``lanes``).
    Found by pattern: the candidate's text is never parsed here."""
    text = sources.get("source") or ""
    read = list(dict.fromkeys(_SCHEDULE_READ.findall(text)))
    line = _SCHEDULE_LINE.search(text)
    mine = _SET_KEY.findall(sources.get("schedule") or "")
    out = []
    if read:
        out.append("The current source reads these `SCHEDULE` keys: " + ", ".join(f"`{k}`" for k in read)
                   + (f" (its own line: `{line.group(0).split('#')[0].strip()}`)" if line else "")
                   + ". This JSON object overrides them: a key set here replaces the source's value, a key left "
                   "out keeps it; write every key you want to change, with its new value.")
    else:
        out.append("The current source reads no `SCHEDULE` key: nothing this JSON sets reaches the kernel. "
                   "Decline and ask the source level to read a tunable from `SCHEDULE` if one should be tuned.")
    unread = [k for k in dict.fromkeys(mine) if k not in read]
    if unread:
        out.append("Set here but never read by the source (no effect): " + ", ".join(f"`{k}`" for k in unread) + ".")
    if backend.endswith("-c"):
        out.append(C_TARGET_SCHEDULE_FACT)
        if set(read) <= {"threads"}:
            out.append("So on this target the schedule level has nothing to change in this candidate: "
                       "decline and name the source level.")
    return "\n".join(out)


def schedule_level_empty(backend: str, sources: dict[str, str]) -> str | None:
    """Why the ``schedule`` level (JSON overrides of ``SCHEDULE``) can change
    nothing in ``sources``: the source reads no ``SCHEDULE`` key, or on the C
    target only ``threads`` (:data:`C_TARGET_SCHEDULE_FACT`); ``None`` when a
    key it reads changes the code. Found by pattern, like :func:`schedule_keys_note`."""
    read = set(_SCHEDULE_READ.findall(sources.get("source") or ""))
    if not read:
        return ("nothing to edit at the schedule level: the source reads no `SCHEDULE` key, so no JSON override "
                "reaches the kernel (the source level can add a tunable read from `SCHEDULE`)")
    if backend.endswith("-c") and read <= {"threads"}:
        return ("nothing to edit at the schedule level: the source reads only `SCHEDULE['threads']`, which "
                "changes nothing on tilelang-c (blocks run one after another in one thread)")
    return None


#: checked with TileLang 0.1.15, target "c" (tests/backends/test_tilelang_c_facts.py)
C_TARGET_SCHEDULE_FACT = ("On tilelang-c, `threads` changes nothing in the generated C: the blocks of a `T.Kernel` "
                          "run one after another in one thread (a plain `for` loop over the block index), so "
                          "only keys the source uses for sizes (tile widths, lanes, rows per block) change the "
                          "code.")


class TileLangBackend(Backend):
    """TileLang programs on one target; see the module docstring for the contract."""

    name = "tilelang"
    target = ""
    levels = ("graph", "schedule", "source")
    level_kinds = {"graph": "data", "schedule": "data", "source": "python-dsl"}
    #: the names ``kstrata import`` gives them too (:func:`kstrata.cli.import_.import_kernel`)
    source_extensions = {"graph": "txt", "schedule": "json", "source": "py"}
    #: launch hooks for the verifier's dynamic checks (``kernel_launched``, ``kernel_does_work``)
    launch_hooks = hooks
    #: each shape's kernels are JIT-compiled at the load's first call (kstrata.verify.warm_loads)
    compiles_at_load = True
    #: folder of :mod:`kstrata.kernels` the initial candidates come from
    kernel_folder = "tilelang"

    def availability(self) -> Availability:
        return envs.availability(self.name)

    def load(
        self, task: Task, sources: dict[str, str], shape: dict[str, int], init_inputs: list[Any]
    ) -> Callable[..., Any]:
        """Import the candidate with this backend's target, build ``ModelNew`` and
        compile its kernels by calling it once on inputs of ``shape``.

        Must run in the TileLang environment's interpreter
        (``envs.python_for(self.name)``); the worker pool starts it there.

        Raises
        ------
        CandidateLoadError
            When tilelang is not importable here, the file does not import,
            lacks ``ModelNew``, or its kernels fail to compile at the first call.
        """
        import torch

        text = compose_source(sources)
        if importlib.util.find_spec("tilelang") is None:
            raise CandidateLoadError(
                f"tilelang is not importable in this interpreter; {self.name} candidates must "
                "run in a worker started with kstrata.backends.envs.python_for(backend) "
                "(create it with `kstrata setup`)")
        os.environ["TILELANG_DEFAULT_TARGET"] = self.target
        # blocks that store to one element fail their kernel's calls (tilelang-c runs blocks one by one)
        races.watch_block_races()
        if self.device == "cpu":  # tilelang.autotune times its configs with CUDA events: it draws one instead
            autotune.draw_configs()
        model = load_model_new(text, init_inputs, self.device)
        module = task.load_module(shape)
        torch.manual_seed(0)
        inputs = [x.to(self.device) if isinstance(x, torch.Tensor) else x
                  for x in module.get_inputs()]
        try:
            with torch.no_grad():
                model(*inputs)
        except Exception as e:  # noqa: BLE001 - a candidate bug is data
            raise CandidateLoadError(with_compiler_errors(  # the compiler's own errors, which TileLang drops
                f"first call (kernel compilation) raised {type(e).__name__}: {e}", compiler_output(str(e)))) from e
        return model

    def level_empty(self, sources: dict[str, str], level: str) -> str | None:
        """Why the ``schedule`` level of ``sources`` changes nothing
        (:func:`schedule_level_empty`); ``None`` for other levels."""
        return schedule_level_empty(self.name, sources) if level == "schedule" else None

    def level_context(self, task: Task, sources: dict[str, str], level: str) -> dict[str, str]:
        """For the ``schedule`` level, which ``SCHEDULE`` keys the current
        source reads (:func:`schedule_keys_note`); nothing for other levels."""
        return {"schedule": schedule_keys_note(self.name, sources)} if level == "schedule" else {}

    def initial_sources(self, task: Task) -> dict[str, str]:
        """The shipped ``kernels/<kernel_folder>/<task>.py`` (with the folder's
        fallback, :data:`kstrata.kernels.FALLBACK`) as graph/schedule/source levels.

        Raises
        ------
        NotImplementedError
            When no TileLang initial candidate ships for ``task``.
        """
        text = kernels.initial_source(self.kernel_folder, task.name)
        if text is None:
            raise NotImplementedError(
                f"{self.name} has no shipped initial candidate for {task.name}; "
                "start from your own kernel file with --initial FILE")
        return {"graph": graph_plan(text), "schedule": json.dumps(schedule_defaults(text)),
                "source": text}


class TileLangCBackend(TileLangBackend):
    """TileLang's C target: compiled with the host C compiler, runs (and is timed) on CPU."""

    name = "tilelang-c"
    target = "c"
    device = "cpu"


class TileLangCudaBackend(TileLangBackend):
    """TileLang on NVIDIA GPUs (target ``cuda``)."""

    name = "tilelang-cuda"
    target = "cuda"
    device = "cuda"
    kernel_folder = "tilelang_cuda"

    def availability(self) -> Availability:
        av = envs.availability(self.name)
        if not av.usable:
            return av
        try:
            import torch

            if not torch.cuda.is_available():
                return Availability(False, "no CUDA device visible to torch", av.versions)
        except ImportError:
            pass
        return av
