"""Measured work of a task without FLOP/byte formulas (issue #23 item 2).

A KernelBench file as it is has no ``flops``/``bytes`` metadata, so the
roofline, the CPU timing-shape fit and the overhead floor would have nothing
to work with. :func:`measured_work` counts them from one reference call:

* FLOPs: :class:`torch.utils.flop_counter.FlopCounterMode` (PyTorch's own
  per-operator formulas: matmuls, convolutions, attention, 2 FLOP per
  multiply-add; elementwise and reduction work counts 0, so a pure
  elementwise task has 0 FLOPs and its roofline is bandwidth-bound);
* bytes: the input, output, parameter and buffer tensors touched once (the
  minimum DRAM traffic of a call that reads every input and weight and writes
  every output once; intermediates are not counted).

The call runs on PyTorch's ``meta`` device first (shapes only: no memory, no
arithmetic, so a 6 GB GPU-sized nominal shape costs nothing); where the model
cannot run there (data-dependent code, ``.item()``), it runs for real on the
CPU, but only when its inputs and parameters take at most
:data:`REAL_RUN_MAX_BYTES`. Results are cached in memory and on disk
(``$KSTRATA_CACHE_DIR/task_work/<task digest>.json``, keyed by the shape and
the torch version), so a plain file is measured once per shape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from kstrata import jsontext

#: A model that cannot run on ``meta`` is run for real only when its inputs
#: and parameters (measured on ``meta``) take at most this many bytes.
REAL_RUN_MAX_BYTES = 256e6

_MEM: dict[tuple[str, str], tuple[float, float]] = {}


class WorkError(RuntimeError):
    """The work of a reference call could not be measured (the message says why)."""


def cache_root() -> Path:
    """``$KSTRATA_CACHE_DIR`` or the platform user cache dir for kstrata
    (:func:`kstrata.measure.roofline.cache_dir`)."""
    from kstrata.measure.roofline import cache_dir

    return cache_dir()


def shape_key(shape: dict[str, int]) -> str:
    """A canonical text key of a shape (sorted ``name=value`` pairs) plus the torch version."""
    return ",".join(f"{k}={int(v)}" for k, v in sorted(shape.items())) + f"|torch={torch.__version__}"


def _disk_path(digest: str) -> Path:
    return cache_root() / "task_work" / f"{digest[:32]}.json"


def _disk_read(digest: str) -> dict[str, list[float]]:
    try:
        data = jsontext.loads(_disk_path(digest).read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _disk_write(digest: str, key: str, value: tuple[float, float]) -> None:
    from kstrata.atomic import write_atomic

    data = _disk_read(digest)
    data[key] = [float(value[0]), float(value[1])]
    try:
        write_atomic(_disk_path(digest), json.dumps(data, sort_keys=True))
    except OSError:  # a read-only cache only costs a re-measurement
        pass


def _tensors(xs: Any) -> list[torch.Tensor]:
    from kstrata.verify.runner import flatten

    out: list[torch.Tensor] = []
    for x in xs:
        if isinstance(x, torch.Tensor):
            out.append(x)
        elif isinstance(x, (tuple, list)):
            out += [t for t in flatten(x) if isinstance(t, torch.Tensor)]
    return out


def _nbytes(ts: list[torch.Tensor]) -> float:
    return float(sum(t.numel() * t.element_size() for t in ts))


class _MetaRecurrence(torch.overrides.TorchFunctionMode):
    """On ``meta``, PyTorch's fused recurrences (``torch.rnn_tanh``,
    ``rnn_relu``, ``lstm``, ``gru``: what ``nn.RNN``/``LSTM``/``GRU`` call)
    answered by shape and counted by formula instead of run.

    On ``meta`` they decompose into one cell per time step, layer and
    direction, each a dozen Python-level reference ops: KernelBench L3
    41_GRUBidirectional (6 layers, 2 directions, 512 steps) took 31 s per
    count at load 2 and over 600 s of shape fitting at load 30. The formula
    is the matmul FLOPs :class:`FlopCounterMode` counts for that
    decomposition (elementwise gate math counts 0): each 2-D weight (``w_ih``,
    ``w_hh``, an LSTM's ``w_hr``) multiplies every one of the ``batch *
    steps`` rows, ``2 * rows * numel(w)`` (tests/tasks/test_kernelbench_files.py
    checks it against the decomposition's count). Packed sequences and real
    tensors go through unchanged.
    """

    NAMES = ("rnn_tanh", "rnn_relu", "lstm", "gru")

    def __init__(self) -> None:
        super().__init__()
        self.flops = 0.0
        self._funcs = {getattr(torch, n): n for n in self.NAMES}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = self._funcs.get(func)
        x = args[0] if args else None
        if name is None or not isinstance(x, torch.Tensor) or x.device.type != "meta" or len(args) != 9 \
                or kwargs or x.dim() not in (2, 3):
            return func(*args, **kwargs)
        _, hx, params, _has_biases, _layers, _dropout, _train, bidirectional, batch_first = args
        h = hx[0] if isinstance(hx, (tuple, list)) else hx
        batched = x.dim() == 3
        steps = x.shape[1] if batched and batch_first else x.shape[0]
        batch = (x.shape[0] if batch_first else x.shape[1]) if batched else 1
        self.flops += 2.0 * batch * steps * sum(w.numel() for w in params if w.dim() == 2)
        width = (2 if bidirectional else 1) * h.shape[-1]
        out = torch.empty(*x.shape[:-1], width, dtype=x.dtype, device="meta")
        states = tuple(torch.empty_like(s, device="meta") for s in (hx if isinstance(hx, (tuple, list)) else (hx,)))
        return (out, *states)


def _instantiate(task: Any, shape: dict[str, int], seed: int, device: str) -> tuple[torch.nn.Module, list[Any]]:
    """The reference model and inputs at ``shape``, built under ``torch.device(device)``.

    On ``meta``, a constructor that reads back a value it computed fails
    (L3 29_SwinMLP's stochastic-depth rule, ``[x.item() for x in
    torch.linspace(0, rate, n)]``: "Tensor.item() cannot be called on meta
    tensors"); the model is then built on the CPU and moved to ``meta``
    (parameters, buffers and plain tensor attributes, as the float64 oracle
    converts them), and the inputs are still drawn on ``meta``.
    """
    try:
        model, inputs, _, _ = task.instantiate(shape, seed)
        return model, inputs
    except Exception:  # noqa: BLE001 - not constructible on meta: build on the CPU, then move
        if device != "meta":
            raise
    module = task.load_module(shape)
    with torch.device("cpu"):
        torch.manual_seed(seed)
        model = module.Model(*list(module.get_init_inputs())).eval().to("meta")
    for mod in model.modules():
        for name, value in list(vars(mod).items()):
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
                setattr(mod, name, value.to("meta"))
    torch.manual_seed(seed + 1)
    return model, list(module.get_inputs())


def count_call(task: Any, shape: dict[str, int], seed: int = 0, device: str = "meta") -> tuple[float, float]:
    """FLOPs and bytes of one reference call at ``shape`` on ``device`` (no cache).
    On ``meta``, fused recurrences are counted by formula (:class:`_MetaRecurrence`).

    Raises
    ------
    Exception
        Whatever the task raises at ``shape`` on ``device``.
    """
    from torch.utils.flop_counter import FlopCounterMode

    from kstrata.verify.runner import flatten

    with torch.random.fork_rng(devices=[]), torch.device(device):
        model, inputs = _instantiate(task, shape, seed, device)
        rec = _MetaRecurrence()
        with torch.no_grad(), FlopCounterMode(display=False) as fc, rec:
            outs = flatten(model(*inputs))
    ts = _tensors(list(inputs)) + _tensors(outs) + list(model.parameters()) + list(model.buffers())
    return float(fc.get_total_flops()) + rec.flops, _nbytes(ts)


def _static_bytes(task: Any, shape: dict[str, int]) -> float:
    """Input + parameter bytes at ``shape``, built on ``meta`` (no forward call)."""
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        model, inputs = _instantiate(task, shape, 0, "meta")
    return _nbytes(_tensors(list(inputs)) + list(model.parameters()) + list(model.buffers()))


def measured_work(task: Any, shape: dict[str, int] | None = None, seed: int = 0,
                  real_run: bool = True) -> tuple[float, float]:
    """FLOPs and bytes of one reference call at ``shape`` (module docstring),
    cached in memory and on disk by the task's digest and the shape.

    Parameters
    ----------
    task:
        A :class:`kstrata.tasks.base.Task`.
    shape:
        Shape variables (completed with the nominal values).
    seed:
        Parameter/input seed of a real run (the counts do not depend on it).
    real_run:
        Whether a model that cannot run on ``meta`` may run for real.

    Returns
    -------
    (flops, bytes)
        FLOPs (not GFLOP) and bytes of one forward call.

    Raises
    ------
    WorkError
        When the reference runs neither on ``meta`` nor, within
        :data:`REAL_RUN_MAX_BYTES`, on the CPU.
    """
    full = task.full_shape(shape)
    key = (task.digest, shape_key(full))
    real_key = (task.digest, key[1] + "|real")  # counted by a real run: not for real_run=False callers
    disk: dict[str, list[float]] | None = None
    for k in (key, real_key) if real_run else (key,):
        if k in _MEM:
            return _MEM[k]
        disk = _disk_read(task.digest) if disk is None else disk
        hit = disk.get(k[1])
        if isinstance(hit, list) and len(hit) == 2:
            _MEM[k] = (float(hit[0]), float(hit[1]))
            return _MEM[k]
    try:
        value = count_call(task, full, seed, "meta")
    except Exception as meta_err:  # noqa: BLE001 - not meta-traceable: try a real run if small
        if not real_run:
            raise WorkError(f"{task.name}: the reference does not run on the meta device at {full}: "
                            f"{type(meta_err).__name__}: {meta_err}") from None
        try:
            static = _static_bytes(task, full)
        except Exception as e:  # noqa: BLE001
            raise WorkError(f"{task.name}: the reference cannot be built at {full}: "
                            f"{type(e).__name__}: {e}") from None
        if static > REAL_RUN_MAX_BYTES:
            raise WorkError(f"{task.name}: the reference does not run on the meta device "
                            f"({type(meta_err).__name__}) and its inputs and parameters take "
                            f"{static / 1e6:.0f} MB at {full}") from None
        try:
            value = count_call(task, full, seed, "cpu")
        except Exception as e:  # noqa: BLE001
            raise WorkError(f"{task.name}: the reference raised at {full}: {type(e).__name__}: {e}") from None
        key = real_key
    _MEM[key] = value
    _disk_write(task.digest, key[1], value)
    return value


def work_or_none(task: Any, shape: dict[str, int] | None = None) -> tuple[float, float] | None:
    """:func:`measured_work`, or None where it cannot be measured."""
    try:
        return measured_work(task, shape)
    except WorkError:
        return None
    except Exception:  # noqa: BLE001 - a task file's own failure: no counts
        return None
