"""Run a lowered graph's kernels on torch tensors.

:class:`PlanRunner` follows a :class:`~kstrata.backends.tvm.lower.Plan`: for each
step it allocates the step's outputs with ``torch.empty`` (fresh every call) and
calls the compiled PrimFunc through DLPack (zero-copy) — used for LLVM and CUDA
modules built by TVM. :class:`OpenCLRunner` runs generated OpenCL C through
``pyopencl`` with the launch table read from TVM's host code, since the TVM
wheel carries no OpenCL runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from kstrata.backends.tvm.lower import Plan
from kstrata.backends.tvm.poison import PoisonSwitch, fill_tensor, fill_value


def torch_dtype(name: str) -> torch.dtype:
    """torch dtype for a TVM dtype string (``"float32"``, ``"bool"``, ...)."""
    return torch.bool if name == "bool" else getattr(torch, name)


def plan_constants(plan: Plan) -> dict[str, torch.Tensor]:
    """The plan's constant tensors."""
    return {n: torch.tensor(vals, dtype=torch_dtype(dt)).reshape(shape)
            for n, (shape, dt, vals) in plan.consts.items()}


#: TVM's compiled functions require their tensor arguments' data 64-byte aligned
ALIGNMENT = 64


def _aligned(t: torch.Tensor) -> torch.Tensor:
    """``t``, or an aligned copy when its data is not :data:`ALIGNMENT`-aligned
    (e.g. a tensor viewing a byte buffer at an odd offset)."""
    return t if t.data_ptr() % ALIGNMENT == 0 or not t.numel() else t.clone()


class PlanRunner:
    """A callable ``(*inputs) -> output(s)`` over compiled PrimFuncs.

    Parameters
    ----------
    plan:
        Kernel order and buffers.
    kernel:
        ``kernel(name)`` -> a function taking ``tvm.runtime.Tensor`` arguments
        (inputs then outputs, as ``call_tir`` passes them).
    params:
        Tensors bound to ``plan.inputs`` after the task inputs (model weights).
    device:
        Where intermediates and outputs are allocated.
    poison:
        The backend's poison switch: while its pattern is not 0 every
        intermediate and output is filled with it after allocation and the
        kernels come from ``poison_kernel(pattern)`` (a poison build; None:
        the normal kernels). See :mod:`kstrata.backends.tvm.poison`.
    poison_kernel:
        ``poison_kernel(pattern)`` -> a ``kernel``-like getter for the poison
        build of ``pattern`` (called once per pattern, on first use).
    """

    def __init__(self, plan: Plan, kernel: Callable[[str], Any], params: list[torch.Tensor], device: str,
                 poison: PoisonSwitch | None = None,
                 poison_kernel: Callable[[int], Callable[[str], Any]] | None = None):
        import tvm

        self.poison, self._poison_kernel = poison, poison_kernel
        self._poisoned: dict[int, dict[str, Any]] = {}
        self.plan = plan
        self.device = torch.device(device)
        self.params = [p.detach().to(self.device).contiguous() for p in params]
        self._from = tvm.runtime.from_dlpack
        # on CUDA, the TVM device whose launch stream each call points at PyTorch's (_on_torch_stream)
        self._tvm_dev = tvm.runtime.device("cuda", self.device.index or 0) if self.device.type == "cuda" else None
        self.kernels = {s["func"]: kernel(s["func"]) for s in plan.steps}
        self.n_inputs = len(plan.inputs) - len(self.params)
        self.consts = {n: t.to(self.device) for n, t in plan_constants(plan).items()}
        self._sized: dict[tuple[Any, ...], Any] = {}

    def _sizes(self, tensors: list[torch.Tensor]) -> tuple[dict[str, Any], dict[int, list[int]], dict[Any, int]]:
        """Buffer shapes, extra TIR arguments and scalar size arguments at these
        input shapes (cached; see :meth:`Plan.resolve`)."""
        if not self.plan.symbolic:
            return self.plan.buffers, {}, {}
        key = tuple(tuple(t.shape) for t in tensors)
        if key not in self._sized:
            try:
                self._sized[key] = self.plan.resolve([tuple(t.shape) for t in tensors])
            except (ValueError, IndexError) as e:
                raise TypeError(f"inputs do not fit the compiled graph: {e}") from e
        return self._sized[key]

    def __call__(self, *inputs: torch.Tensor) -> Any:
        if len(inputs) != self.n_inputs:
            raise TypeError(f"expected {self.n_inputs} inputs, got {len(inputs)}")
        env: dict[str, torch.Tensor] = dict(self.consts)
        tensors = [_aligned(x.contiguous()) for x in inputs] + self.params
        env.update(zip(self.plan.inputs, tensors))
        buffers, tir_args, prims = self._sizes(tensors)
        with self._on_torch_stream():
            return self._run(env, buffers, tir_args, prims)

    def _on_torch_stream(self) -> Any:
        """On a CUDA device, TVM's launches go to PyTorch's current stream
        (``tvm_ffi.use_raw_stream``): on TVM's own default stream they were
        outside a CUDA graph captured on PyTorch's stream, so a replay ran
        nothing and returned the warm-up's outputs (every tvm-cuda candidate
        on the H200 read ``rejected``, timed_output, on a freshened copy), and
        outside a caller's stream order. A no-op context elsewhere."""
        import contextlib

        if self._tvm_dev is None:
            return contextlib.nullcontext()
        try:
            import tvm_ffi
        except ImportError:
            return contextlib.nullcontext()
        return tvm_ffi.use_raw_stream(self._tvm_dev, torch.cuda.current_stream(self.device).cuda_stream)

    def _run(self, env: dict[str, torch.Tensor], buffers: dict[str, Any], tir_args: dict[int, list[Any]],
             prims: dict[Any, int]) -> Any:
        conv = self._from
        pattern = self.poison.pattern if self.poison is not None else 0
        kernels = self._kernels_for(pattern) if pattern else self.kernels
        for i, step in enumerate(self.plan.steps):
            outs = []
            for o in step["outs"]:
                shape, dtype = buffers[o]
                env[o] = torch.empty(shape, dtype=torch_dtype(dtype), device=self.device)
                if pattern:
                    fill_tensor(env[o], pattern)
                outs.append(env[o])
            args = [conv(env[a]) if isinstance(a, str) else prims[a["prim"]] for a in step["args"]]
            kernels[step["func"]](*args, *[conv(t) for t in outs],
                                  *tir_args.get(i, ()))
        results = [env[n] for n in self.plan.outputs]
        return results[0] if self.plan.single and len(results) == 1 else tuple(results)


    def _kernels_for(self, pattern: int) -> dict[str, Any]:
        if self._poison_kernel is None:
            return self.kernels
        if pattern not in self._poisoned:
            get = self._poison_kernel(pattern)
            self._poisoned[pattern] = {s["func"]: get(s["func"]) for s in self.plan.steps}
        return self._poisoned[pattern]


_DEVICE: list[Any] = []


def opencl_device() -> Any:
    """The OpenCL device to run on: ``KSTRATA_OPENCL_DEVICE`` (an index into all
    platforms' devices) or the first device that compiles a trivial kernel (a
    PoCL whose LLVM does not know the host CPU fails there).

    Raises
    ------
    RuntimeError
        When no device compiles OpenCL C.
    """
    import os

    import pyopencl as cl

    if _DEVICE:
        return _DEVICE[0]
    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    if os.environ.get("KSTRATA_OPENCL_DEVICE"):
        devices = [devices[int(os.environ["KSTRATA_OPENCL_DEVICE"])]]
    errors = []
    for d in devices:
        try:
            cl.Program(cl.Context([d]), "__kernel void k(__global float* a) { a[0] = 1.0f; }").build()
        except Exception as e:  # noqa: BLE001 - try the next device
            errors.append(f"{d.name}: {str(e).strip().splitlines()[-1] if str(e).strip() else e}")
            continue
        _DEVICE.append(d)
        return d
    raise RuntimeError("no OpenCL device compiles a kernel: " + ("; ".join(errors) or "none found")
                       + " (apt-get install pocl-opencl-icd)")


class OpenCLRunner:
    """Run OpenCL C kernels of a plan with pyopencl (e.g. on PoCL).

    Inputs are copied to device buffers each call and outputs copied back into
    fresh torch tensors; intermediates stay on the device.

    Raises
    ------
    RuntimeError
        From :meth:`__init__` when the program does not compile (with the build log).
    """

    def __init__(self, plan: Plan, source: str, launch: dict[str, Any], params: list[torch.Tensor],
                 poison: PoisonSwitch | None = None,
                 poison_built: Callable[[int], tuple[str, dict[str, Any]]] | None = None):
        import numpy as np
        import pyopencl as cl

        self.poison, self._poison_built = poison, poison_built
        self._poisoned: dict[int, OpenCLRunner] = {}
        self.cl, self.np = cl, np
        self.ctx = cl.Context([opencl_device()])
        self.queue = cl.CommandQueue(self.ctx)
        self.program = cl.Program(self.ctx, source).build()
        self.plan, self.launch = plan, launch
        self.params = [p.detach().cpu().contiguous() for p in params]
        self.n_inputs = len(plan.inputs) - len(self.params)
        self._kernels: dict[str, Any] = {}
        for entry in launch.values():
            for k in entry["kernels"]:
                self._kernels[k["name"]] = getattr(self.program, k["name"])

    def _buffer(self, t: torch.Tensor) -> Any:
        mf = self.cl.mem_flags
        nbytes = max(t.numel() * t.element_size(), 1)
        if t.numel() == 0:
            return self.cl.Buffer(self.ctx, mf.READ_WRITE, nbytes)
        return self.cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=t.numpy())

    def _fill(self, buf: Any, nbytes: int, dtype: str | None, pattern: int) -> None:
        """Poison a device buffer: typed with :func:`fill_value`, untyped
        workspaces with bytes 0xFF (NaN / -1) or 0x55."""
        np = self.np
        if dtype is None or dtype == "bool":
            value = np.array([0xFF if pattern == 1 else 0x55], dtype=np.uint8)
        else:
            value = np.array([fill_value(dtype, pattern)], dtype=dtype)
        if nbytes % value.nbytes == 0:
            self.cl.enqueue_fill_buffer(self.queue, buf, value, 0, nbytes)

    def __call__(self, *inputs: torch.Tensor) -> Any:
        pattern = self.poison.pattern if self.poison is not None else 0
        if not pattern:
            return self._run(inputs, 0)
        if self._poison_built is None:
            return self._run(inputs, pattern)
        if pattern not in self._poisoned:
            code, launch = self._poison_built(pattern)
            self._poisoned[pattern] = OpenCLRunner(self.plan, code, launch, self.params)
        return self._poisoned[pattern]._run(inputs, pattern)

    def _run(self, inputs: tuple[torch.Tensor, ...], pattern: int) -> Any:
        cl, np = self.cl, self.np
        if len(inputs) != self.n_inputs:
            raise TypeError(f"expected {self.n_inputs} inputs, got {len(inputs)}")
        host = [x.detach().cpu().contiguous() for x in inputs] + self.params
        named = list(zip(self.plan.inputs, host)) + list(plan_constants(self.plan).items())
        bufs = {n: self._buffer(t.view(torch.uint8) if t.dtype == torch.bool else t) for n, t in named}
        for step in self.plan.steps:
            for o in step["outs"]:
                shape, dtype = self.plan.buffers[o]
                n = 1
                for d in shape:
                    n *= d
                nbytes = max(n * torch.empty((), dtype=torch_dtype(dtype)).element_size(), 1)
                bufs[o] = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, nbytes)
                if pattern and n:
                    self._fill(bufs[o], nbytes, dtype, pattern)
            entry = self.launch[step["func"]]
            local = dict(zip(entry["params"], [bufs[a] for a in step["args"] + step["outs"]]))
            # a PrimFunc's workspace is one buffer for all its kernels: one writes it, the next reads it
            spaces: dict[str, Any] = {}
            for k in entry["kernels"]:
                args = []
                for a in k["args"]:
                    if isinstance(a, str):
                        args.append(local[a])
                    elif isinstance(a, dict):
                        ws = spaces.get(a.get("name", ""))
                        if ws is None:
                            ws = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, max(a["alloc"], 1))
                            if pattern and a["alloc"]:
                                self._fill(ws, a["alloc"], None, pattern)
                            if a.get("name"):
                                spaces[a["name"]] = ws
                        args.append(ws)
                    else:
                        args.append(np.int32(a))
                kern = self._kernels[k["name"]]
                gsize = tuple(g * b for g, b in zip(k["grid"], k["block"]))
                kern(self.queue, gsize, tuple(k["block"]), *args)
        results = []
        for n in self.plan.outputs:
            if n in self.plan.buffers:
                shape, dtype = self.plan.buffers[n]
            else:  # an input returned as is
                idx = self.plan.inputs.index(n)
                shape, dtype = list(host[idx].shape), str(host[idx].dtype).replace("torch.", "")
            out = torch.empty(shape, dtype=torch_dtype(dtype))
            view = out.view(torch.uint8) if out.dtype == torch.bool else out
            if out.numel():
                cl.enqueue_copy(self.queue, view.numpy(), bufs[n])
            results.append(out)
        self.queue.finish()
        return results[0] if self.plan.single and len(results) == 1 else tuple(results)
