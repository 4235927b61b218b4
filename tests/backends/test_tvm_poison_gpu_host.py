"""A poison build for a GPU target leaves the host function alone.

On the H100 (2026-12-05) every tvm-cuda candidate of rmsnorm and cross_entropy
died of SIGSEGV on the verifier's size-1 test (D=1, C=1): there the PrimFunc
keeps its intermediates as ``global`` workspaces, one kernel per block
(``schedule.unit_reductions``), and the poison pass filled them from the host
function, storing into device memory from the CPU. Checked here after TVM's
own host/device split, without a GPU or nvcc. The workspaces are poisoned on
the device instead: a fill kernel per global buffer, launched first.
"""

from __future__ import annotations

import re

import pytest
import tvm
from tvm.tirx import compilation_pipeline as cp

from kstrata.backends.registry import get_backend
from kstrata.backends.tvm import poison
from kstrata.tasks.loader import resolve_task


def _split_module(task_name: str, shape: dict[str, int], fill: int = 0):
    """The task's tvm-cuda start at ``shape`` after TVM's default TIR pipeline
    (host and device functions split), as the poison pass receives it; with
    ``fill``, after the device-side fills a poison build adds first."""
    backend = get_backend("tvm-cuda")
    task = resolve_task(task_name)
    _, funcs, _, _ = backend.scheduled_funcs(task, backend.initial_sources(task), task.full_shape(shape))
    if fill:
        funcs = {n: poison.fill_global_workspaces(f, fill) for n, f in funcs.items()}
    target = tvm.target.Target(backend.target(), host="llvm")
    mod = tvm.tirx.transform.BindTarget(target)(tvm.IRModule(dict(funcs)))
    base, _, _ = cp.get_tir_pipeline("s_tir")
    with target:
        return base(mod)


def _filled(mod, pass_) -> dict[str, bool]:
    """{function kind: whether any function of that kind stores NaN (pattern 1)};
    the pass runs on a copy (it updates the module it is given)."""
    out: dict[str, bool] = {}
    for _, func in pass_(1)(tvm.IRModule(dict(mod.functions))).functions.items():
        kind = func.attrs["target"].kind.name
        out[kind] = out.get(kind, False) or "nan" in func.script().lower()
    return out


@pytest.mark.parametrize("task_name,shape", [("rmsnorm", {"B": 3, "D": 1}), ("cross_entropy", {"B": 3, "C": 1})])
def test_gpu_host_function_is_not_filled(task_name, shape):
    mod = _split_module(task_name, shape)
    host = [f for _, f in mod.functions.items() if f.attrs["target"].kind.name == "llvm"]
    assert any("alloc" in f.script() for f in host)  # a host function allocates the kernels' workspaces
    assert _filled(mod, poison.poison_pass) == {"llvm": False, "cuda": False}
    # a CPU build of the same split would fill them: the pass does fill where it should
    cpu_only = tvm.IRModule({gv: f for gv, f in mod.functions.items() if f.attrs["target"].kind.name == "llvm"})
    assert _filled(cpu_only, poison.poison_pass) == {"llvm": True}



#: pattern 2's 1e30 as TVMScript prints a float32 constant
BIG = "1000000000000000019884624838656"


def test_gpu_workspaces_are_filled_on_the_device_before_the_kernels_run():
    mod = _split_module("rmsnorm", {"B": 3, "D": 1}, fill=2)
    funcs = {gv.name_hint: f for gv, f in mod.functions.items()}
    host = next(f.script() for f in funcs.values() if f.attrs["target"].kind.name == "llvm")
    allocated = re.findall(r"(\w+) = T\.\w*alloc\w*\(", host)
    assert len(allocated) >= 2
    fills = [n for n, f in funcs.items() if f.attrs["target"].kind.name == "cuda" and BIG in f.script()]
    # one fill kernel per workspace, each storing the pattern into that buffer only
    assert len(fills) == len(allocated)
    launched = re.findall(r'call_\w*kernel\w*\("(\w+)"', host)
    assert set(launched[:len(fills)]) == set(fills)  # the fills are launched first
    assert len(launched) > len(fills)  # the PrimFunc's own kernels follow
    # the timed build (no poison) is unchanged
    plain = _split_module("rmsnorm", {"B": 3, "D": 1})
    assert not any(BIG in f.script() for _, f in plain.functions.items())
