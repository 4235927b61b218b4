"""Compile scheduled PrimFuncs for a target and produce/consume ``source`` text.

``source`` texts carry what is needed to run them in comment lines at the top
(``;`` for LLVM IR, ``//`` for OpenCL C and CUDA C)::

    ; kstrata-tvm source target=llvm shape={"B": 8, "D": 512}
    ; kstrata-plan: {...}            kernel order and buffers (lower.Plan)
    // kstrata-launch: {...}         OpenCL only: per PrimFunc, its kernels,
                                     argument buffers and grid/block sizes

``shape=symbolic`` code (tvm-llvm's default) takes every size from its
arguments' shapes (and extra ``int64`` arguments listed in the plan), so it runs
at every shape; code built from a ``# build: static`` (or static-exported)
graph is specialized to the header's shape and refused at any other.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

from kstrata.backends.tvm.lower import Plan
from kstrata.execute.cpus import allowed_cpu_count

TARGET_KINDS = ("llvm", "opencl", "cuda")


class BuildError(Exception):
    """Code that does not compile (the message has the compiler's words)."""


#: The one fast-math flag of every ``llvm`` target: floating-point adds and
#: multiplies may be reassociated, so LLVM's loop vectorizer turns a row
#: reduction with a symbolic extent (``for k in range(D): acc += x[k] * x[k]``)
#: into vector partial sums folded after the loop, as eager PyTorch's reductions
#: and a schedule's ``rfactor`` do. Without it each sum was one scalar
#: ``vfmadd231ss`` chain, 4 cycles per element, and ``rfactor`` applies only
#: where the lanes divide a constant extent, so no symbolic build had a vector
#: reduction (rmsnorm 1024x1024 on a 2-core AVX-512 EPYC: the quick start's best
#: 0.75x of eager; ``benchmarks/results/cpu_rows.txt``). NaNs, infinities and
#: signed zeros keep IEEE semantics (no ``nnan``/``ninf``/``nsz``), so a max
#: reduction stays scalar here and is vectorized only by ``rfactor``.
LLVM_FAST_MATH: dict[str, bool] = {"fast-math-reassoc": True}


def make_target(kind: str, arch: str | None = None) -> Any:
    """The ``tvm.target.Target`` for a backend target kind.

    ``llvm`` uses the host CPU (``mcpu`` from LLVM's host detection), the
    number of CPUs this process may run on (MetaSchedule needs ``num-cores``)
    and :data:`LLVM_FAST_MATH`; ``cuda`` defaults to ``sm_90``
    (H200) unless ``arch`` or ``KSTRATA_CUDA_ARCH`` says otherwise.
    """
    import tvm

    if kind == "llvm":
        spec: dict[str, Any] = {"kind": "llvm", "num-cores": allowed_cpu_count(), **LLVM_FAST_MATH}
        cpu = _host_cpu()
        if cpu:
            spec["mcpu"] = cpu
        return tvm.target.Target(spec)
    if kind == "cuda":
        return tvm.target.Target({"kind": "cuda", "arch": arch or os.environ.get("KSTRATA_CUDA_ARCH", "sm_90")})
    if kind == "opencl":
        return tvm.target.Target({"kind": "opencl"})
    raise ValueError(f"unknown TVM target kind {kind!r}; expected one of {TARGET_KINDS}")


def _host_cpu() -> str:
    import tvm

    f = tvm.get_global_func("target.llvm_get_system_cpu", True)
    return str(f()) if f is not None else ""


def _comment(kind: str) -> str:
    return ";" if kind == "llvm" else "//"


def source_header(kind: str, shape: dict[str, int] | None, plan: Plan, launch: dict[str, Any] | None = None) -> str:
    """Header lines of a ``source`` text; ``shape=None`` writes ``shape=symbolic``
    (code that reads the sizes from its arguments)."""
    c = _comment(kind)
    shape_text = "symbolic" if shape is None else json.dumps(shape, sort_keys=True)
    lines = [
        f"{c} kstrata-tvm source target={kind} shape={shape_text}",
        f"{c} kstrata-plan: {plan.to_json()}",
    ]
    if launch is not None:
        lines.append(f"{c} kstrata-launch: {json.dumps(launch, separators=(',', ':'))}")
    return "\n".join(lines) + "\n"


def parse_source_header(text: str) -> tuple[str, dict[str, int] | None, Plan, dict[str, Any] | None]:
    """(target kind, shape (None: ``symbolic``), plan, launch table or None) from a source text.

    Raises
    ------
    BuildError
        When the header lines are missing or malformed.
    """
    m = re.search(r"kstrata-tvm source target=(\w+) shape=(\{.*\}|symbolic)", text)
    p = re.search(r"kstrata-plan: (\{.*\})", text)
    if not m or not p:
        raise BuildError("source text lacks its 'kstrata-tvm source' / 'kstrata-plan' header lines")
    launch = re.search(r"kstrata-launch: (\{.*\})", text)
    try:
        shape = None if m.group(2) == "symbolic" else json.loads(m.group(2))
        return (m.group(1), shape, Plan.from_json(p.group(1)),
                json.loads(launch.group(1)) if launch else None)
    except (ValueError, TypeError) as e:
        raise BuildError(f"source header does not parse: {e}") from e


# --------------------------------------------------------------------------- building
def build_module(funcs: dict[str, Any], target: Any, poison: int = 0) -> Any:
    """``tvm.tirx.build`` of the scheduled PrimFuncs (one runtime Module).

    ``poison`` 1 or 2 makes a *poison build*: every buffer the PrimFuncs
    allocate is filled with that pattern first (:mod:`kstrata.backends.tvm.poison`);
    0 (default) is TVM's unchanged default pipeline.

    Raises
    ------
    BuildError
        With TVM's message when lowering or code generation fails, or naming
        the race where iterations of a parallel loop store to one element
        (:func:`kstrata.backends.tvm.races.parallel_race`).
    """
    import tvm

    from kstrata.backends.tvm.poison import fill_global_workspaces, pipeline_name
    from kstrata.backends.tvm.races import ParallelRace, check_funcs

    pipeline = pipeline_name(poison) if poison else "default"
    kind = (target if isinstance(target, tvm.target.Target) else tvm.target.Target(target)).kind.name
    if poison and kind == "cuda":  # its global workspaces are device memory: filled on the device
        funcs = {name: fill_global_workspaces(f, poison) for name, f in funcs.items()}
    try:
        check_funcs(funcs)  # iterations of a parallel loop that store to one element: not built
    except ParallelRace as e:
        raise BuildError(str(e)) from e
    try:
        module = tvm.tirx.build(tvm.IRModule(dict(funcs)), target=target, pipeline=pipeline)
    except Exception as e:  # noqa: BLE001 - a bad schedule is data
        raise BuildError(f"TVM build failed: {_short(e)}") from e
    too_many = threads_over_limit(funcs, target)
    if too_many:
        raise BuildError(too_many)
    return module


#: ``launch_thread("threadIdx.x", 2048)`` in a lowered device kernel's script (the extent a constant)
_THREAD_LAUNCH = re.compile(r'launch_thread\("threadIdx\.([xyz])", (?:T\.int(?:32|64)\()?(\d+)\)?\)')


def threads_over_limit(funcs: dict[str, Any], target: Any) -> str:
    """Why a CUDA kernel of ``funcs`` could not launch: its threads per block
    (the product of its ``threadIdx`` extents) above the target's
    ``max_num_threads`` (1024 on every NVIDIA GPU since sm_20), or ``""``.

    TVM builds such a kernel without complaint; on the GPU its launch fails
    with an invalid-argument error that names neither the kernel nor the
    limit (queue round rt58: a schedule binding ``threadIdx.x`` to 2048 built
    on tvm-cuda). Only CUDA targets are checked; a lowering that fails here
    reports nothing (the build above succeeded, and its error would be TVM's).
    """
    import tvm
    from tvm import tirx

    if str(getattr(getattr(target, "kind", None), "name", target)) != "cuda":
        return ""
    limit = int(target.attrs.get("max_num_threads", 1024))
    try:
        from tvm.tirx.build import split_host_device_mods

        mod = tirx.transform.BindTarget(target.with_host(tvm.target.Target("llvm")))(tvm.IRModule(dict(funcs)))
        pipeline, _, _ = tvm.tirx.get_default_tir_pipeline(target)
        _, devs = split_host_device_mods(pipeline(mod))
    except Exception:  # noqa: BLE001 - see above
        return ""
    for dmod in devs.values():
        for gv, f in dmod.functions.items():
            extents: dict[str, int] = {}
            for axis, n in _THREAD_LAUNCH.findall(f.script()):
                extents[axis] = max(extents.get(axis, 1), int(n))
            total = 1
            for n in extents.values():
                total *= n
            if total > limit:
                dims = " x ".join(f"threadIdx.{a} {n}" for a, n in sorted(extents.items()))
                return (f"kernel {gv.name_hint} launches {total} threads per block ({dims}); a CUDA block holds at "
                        f"most {limit} (the product of the threadIdx extents): split the loop bound to threadIdx "
                        f"by at most {limit} and bind the outer part to blockIdx or leave it a serial loop")
    return ""


#: what :func:`codegen_only` hands TVM instead of compiled code (a PTX comment)
NOT_COMPILED = b"// kstrata: code generation check only, not compiled\n"


@contextlib.contextmanager
def codegen_only(target: Any) -> Iterator[None]:
    """Within the block, a CUDA build stops after code generation.

    On a host with TVM's CUDA runtime, ``tvm.tirx.build`` for ``cuda``
    compiles the generated CUDA C at once (``CUDAModuleCreate`` calls the
    ``tvm_callback_cuda_compile`` global function: NVRTC by default, nvcc
    where a backend registered it; apache/tvm ``src/runtime/cuda/cuda_module.cc``);
    without it (this CPU machine) the module only keeps the source. A check
    that a schedule lowers and generates code needs no compiled code, so the
    callback returns :data:`NOT_COMPILED` meanwhile (a module built so must
    not be run; its ``inspect_source()`` is the CUDA C), and the callback
    that was registered before is restored after. Other targets: no change.
    """
    import tvm

    if str(getattr(getattr(target, "kind", None), "name", target)) != "cuda":
        yield
        return
    name = "tvm_callback_cuda_compile"
    before = tvm.get_global_func(name, allow_missing=True)

    def not_compiled(code: str, *_: Any) -> bytes:
        return NOT_COMPILED

    tvm.register_global_func(name, not_compiled, override=True)
    try:
        yield
    finally:
        if before is not None:
            tvm.register_global_func(name, before, override=True)
        else:
            import tvm_ffi

            tvm_ffi.remove_global_func(name)


def _short(e: BaseException) -> str:
    """TVM's error in one line: the last line naming an error, or, for a pass's
    error (its cause first, then ``Error in pass: NAME`` and the script), the
    cause with the pass named (queue round rt66: "TVM build failed: Error in pass:
    _pipeline" hid "No matched reducer for the identity and the combiner ...")."""
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    at = next((i for i, ln in enumerate(lines) if ln.startswith("Error in pass:")), None)
    if at:  # the cause is the text before it
        return f"{' '.join(ln.strip() for ln in lines[:at])} ({lines[at].strip()[:100]})"[:600]
    tail = [ln for ln in lines if "Error" in ln or "Check failed" in ln] or lines[-1:]
    return (tail[-1] if tail else type(e).__name__)[:600]


def generated_source(module: Any, kind: str) -> str:
    """The target code of a built module: LLVM IR, OpenCL C or CUDA C."""
    if kind == "llvm":
        return str(module.inspect_source("ll"))
    for m in module.imports:
        return str(m.inspect_source())
    # queue round rt58: "built cuda module has no device module" named no cause
    raise BuildError(f"built {kind} module has no device kernel: no loop of any PrimFunc is bound to a GPU thread, "
                     "so TVM compiled every loop nest for the host. A `schedule_<name>` function replaces that "
                     "PrimFunc's default GPU schedule whole: bind its loops itself (e.g. `sch.bind(row, "
                     "\"blockIdx.x\")`, and an inner split to `\"threadIdx.x\"`) for every block")


def load_llvm_ir(text: str) -> Any:
    """A runtime Module from (possibly edited) LLVM IR text.

    Raises
    ------
    BuildError
        When LLVM does not parse or compile the IR.
    """
    import tvm

    with tempfile.TemporaryDirectory(prefix="kstrata_ll_") as d:
        path = os.path.join(d, "kernels.ll")
        with open(path, "w") as f:
            f.write(text)
        try:
            return tvm.runtime.load_module(path)
        except Exception as e:  # noqa: BLE001
            raise BuildError(f"LLVM rejected the IR: {llvm_diagnostic(str(e), path)}") from e


def llvm_diagnostic(message: str, path: str) -> str:
    """LLVM's parse error in ``message`` as ``line L, column C: what`` with the
    offending IR line, the line numbers those of the ``source`` text as given
    (its header lines included).

    LLVM writes ``PATH:L:C: error: what``, the line, then a caret line; the
    caret alone was all a proposer was told (red-team rt60: "LLVM rejected
    the IR: ^" for an undefined value or an empty attribute group). Another
    message is shortened as any TVM error is.
    """
    lines = message.strip().splitlines()
    for i, ln in enumerate(lines):
        m = re.match(rf"^{re.escape(path)}:(\d+):(\d+): error: (.*)$", ln) or re.match(
            r"^\S*:(\d+):(\d+): error: (.*)$", ln)
        if m:
            where = f"line {m.group(1)}, column {m.group(2)}: {m.group(3).strip()}"
            code = lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1].strip() != "^" else ""
            return (where + (f" (at `{code[:300]}`)" if code else ""))[:600] + _naming_hint(m.group(3), code)
    return _short(Exception(message.replace(path, "source")))


#: a local value whose name starts with a digit and goes on with a letter: LLVM reads %94 and then junk
_DIGIT_NAME = re.compile(r"^%\d+[A-Za-z_.$]")


def _naming_hint(what: str, code: str) -> str:
    """What an LLVM error about a value's name means, for the two an edit of
    generated IR makes: a new value named ``%94b`` (LLVM reads the numbered
    value ``%94``, then expects ``=``: queue round rt89, a second accumulator
    beside ``%94`` read "expected '=' after instruction id") and a new
    numbered value out of order ("instruction expected to be numbered"). ``""``
    for any other error."""
    if _DIGIT_NAME.match(code) or "expected '=' after instruction id" in what and re.match(r"^%\d", code):
        return (": a local name that starts with a digit (%94b) is read as the numbered value %94 followed by "
                "junk; name a value you add with a letter first (%acc_b, %sum2)")
    if "expected to be numbered" in what:
        return (": unnamed values (%N) must be numbered 0, 1, 2, ... in the order they are defined in a function, "
                "so a numbered value added or moved breaks the count; name a value you add with a letter first "
                "(%acc_b, %sum2)")
    return ""


def launch_table(funcs: dict[str, Any], target: Any) -> dict[str, Any]:
    """Per PrimFunc, the device kernels its host code launches, in order.

    Returns
    -------
    dict
        ``{primfunc: {"params": [buffer names in call order],
        "kernels": [{"name", "args": [buffer name | {"alloc": nbytes, "name": workspace} | int],
        "grid": [x, y, z], "block": [x, y, z], "shared": bytes}]}}``,
        read from TVM's own host/device split (``tvm.tirx.build`` steps 3-5).
    """
    import tvm
    from tvm import tirx
    from tvm.tirx.build import split_host_device_mods

    host_target = tvm.target.Target("llvm")
    mod = tirx.transform.BindTarget(target.with_host(host_target))(tvm.IRModule(dict(funcs)))
    pipeline, _, _ = tvm.tirx.get_default_tir_pipeline(target)
    try:
        mod = pipeline(mod)
    except Exception as e:  # noqa: BLE001
        raise BuildError(f"TVM lowering failed: {_short(e)}") from e
    host, devs = split_host_device_mods(mod)
    kernels: dict[str, Any] = {}
    for dmod in devs.values():
        for gv, f in dmod.functions.items():
            kernels[gv.name_hint] = f
    out: dict[str, Any] = {}
    for name, func in funcs.items():
        bmap = getattr(func, "buffer_map", None)  # before TVM 0.27 params were handles
        params = [str(bmap[p].name) if bmap is not None and p in bmap else str(p.name) for p in func.params]
        hf = None
        for gv, f in host.functions.items():
            if gv.name_hint == name:
                hf = f
        if hf is None:
            raise BuildError(f"host function for {name} not found after lowering")
        entry: dict[str, Any] = {"params": params, "kernels": []}
        text = hf.script()
        allocs = _workspaces(text)
        for m in re.finditer(r'T\.call_ffi_kernel\("(\w+)", (.*?), launch_params=\[(.*?)\]', text):
            arg_text = re.sub(r"T\.u?int\d+\((-?\d+)\)", r"\1", m.group(2))
            kname, arglist = m.group(1), [a.strip() for a in arg_text.split(",")]
            kf = kernels[kname]
            n_data = len(kf.params)
            tags = [t.strip().strip('"') for t in m.group(3).split(",") if t.strip()]
            data, vals = arglist[:n_data], [int(v) for v in arglist[n_data:]]
            grid, block, shared = [1, 1, 1], [1, 1, 1], 0
            for tag, v in zip(tags, vals):
                if tag.startswith("blockIdx."):
                    grid["xyz".index(tag[-1])] = v
                elif tag.startswith("threadIdx."):
                    block["xyz".index(tag[-1])] = v
                else:
                    shared = v
            args: list[Any] = []
            for a in data:
                if re.fullmatch(r"-?\d+", a):
                    args.append(int(a))
                    continue
                n = a[:-len(".data")] if a.endswith(".data") else a
                base = re.sub(r"_\d+$", "", n)
                if n in params or base in params:
                    args.append(n if n in params else base)
                elif n in allocs or base in allocs:
                    key = n if n in allocs else base  # one buffer per workspace, shared by the kernels
                    args.append({"alloc": allocs[key], "name": key})
                else:
                    raise BuildError(f"kernel {kname} argument {a} is neither a parameter nor a workspace")
            entry["kernels"].append({"name": kname, "args": args, "grid": grid, "block": block,
                                     "shared": shared})
        if not entry["kernels"]:
            raise BuildError(f"{name}: no device kernel launches found in its host code")
        out[name] = entry
    return out


def _workspaces(host_script: str) -> dict[str, int]:
    """Global workspaces a host function allocates: name -> bytes. TVMScript
    leaves the dtype out where it is float32 (``x_red = T.alloc_buffer((3,))``,
    mean_dim's unit reduction at B=1, R=1, D=3): 4 bytes an element then."""
    out: dict[str, int] = {}
    for m in re.finditer(r"(\w+) = T\.\w*alloc\w*\(\(([^)]*)\)(?:,\s*\"(\w+)\")?", host_script):
        n = 1
        for e in m.group(2).split(","):
            e = re.sub(r"T\.int64\((\d+)\)", r"\1", e.strip())
            if e:
                n *= int(e)
        dtype = m.group(3) or "float32"
        bits = int(re.search(r"(\d+)$", dtype).group(1)) if re.search(r"\d+$", dtype) else 8
        out[m.group(1)] = n * max(bits // 8, 1)
    return out


# --------------------------------------------------------------------------- nvcc
def nvcc_path() -> str | None:
    """The ``nvcc`` executable, or None."""
    return shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None
    )


#: nvcc's output in this process by (nvcc, arch, fmt, sha256 of the CUDA C): a candidate's normal build
#: and its two poison builds at a shape, and shapes that specialise to the same kernels, often generate
#: the same text (relu's start at the verifier's 17 shapes: 51 builds, 13 distinct texts; a poison
#: build differs only where a kernel allocates a ``local`` array or a workspace), and nvcc is most of
#: a tvm-cuda build. Same text, same compiler, same flags: the same PTX, so no check is weakened.
_NVCC_DONE: dict[tuple[str, str, str, str], Future] = {}
_NVCC_DONE_LOCK = threading.Lock()
#: most compiled texts kept (a candidate's verification compiles at most a few dozen)
NVCC_CACHE_ENTRIES = 256


def nvcc_compile(code: str, arch: str = "sm_90", fmt: str = "ptx", timeout: float = 300) -> bytes:
    """Compile CUDA C with nvcc; returns the PTX (``fmt="ptx"``) or cubin bytes.
    A text already compiled in this process (or being compiled by another
    thread) with the same nvcc, ``arch`` and ``fmt`` is not compiled again
    (:data:`_NVCC_DONE`); a failure is not kept.

    Raises
    ------
    BuildError
        When nvcc is missing or rejects the code (its stderr is the message).
    """
    nvcc = nvcc_path()
    if nvcc is None:
        raise BuildError("nvcc not found (install the CUDA toolkit or put nvcc on PATH)")
    key = (nvcc, arch, fmt, hashlib.sha256(code.encode()).hexdigest())
    with _NVCC_DONE_LOCK:
        done, mine = _NVCC_DONE.get(key), None
        if done is None:
            if len(_NVCC_DONE) >= NVCC_CACHE_ENTRIES:
                _NVCC_DONE.pop(next(iter(_NVCC_DONE)))
            done = mine = _NVCC_DONE[key] = Future()
    if mine is None:
        return done.result()
    try:
        out = _run_nvcc(nvcc, code, arch, fmt, timeout)
    except BaseException as e:
        with _NVCC_DONE_LOCK:
            _NVCC_DONE.pop(key, None)
        mine.set_exception(e)
        raise
    mine.set_result(out)
    return out


def _run_nvcc(nvcc: str, code: str, arch: str, fmt: str, timeout: float) -> bytes:
    """One nvcc run (see :func:`nvcc_compile`)."""
    with tempfile.TemporaryDirectory(prefix="kstrata_nvcc_") as d:
        src, out = os.path.join(d, "k.cu"), os.path.join(d, f"k.{fmt}")
        with open(src, "w") as f:
            f.write(code)
        cmd = [nvcc, f"--{fmt}", "-O3", f"-arch={arch}", "-o", out, src]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise BuildError(f"nvcc failed: {(r.stderr or r.stdout).strip()[-1500:]}")
        with open(out, "rb") as f:
            return f.read()
