"""Compute reached through a tensor into NumPy (or a Python list) in a DSL
candidate's host code is caught like importing numpy (``no_foreign_libraries``),
and a candidate with no kernel is still caught at run time (``kernel_launched``)
when that check only warns. The TileLang counterparts (case 17) are in
tests/backends/test_tilelang_hooks.py."""

from __future__ import annotations

import pytest

from kstrata.execute import WorkerPool
from kstrata.tasks.loader import resolve_task
from kstrata.verify import verify_candidate
from kstrata.verify.integrity.static import static_findings

TRITON_NUMPY = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def unused(x_ptr, n, BLOCK: tl.constexpr):
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        a = x.numpy()
        return torch.as_tensor(a * (a > 0), dtype=torch.float32)
'''

ESCAPES = {
    "numpy_method": "a = x.numpy()",
    "array_protocol": "a = x.__array__()",
    "tolist": "a = x.tolist()",
    "from_numpy": "a = torch.from_numpy(x)",
    "getattr_literal": "a = getattr(x, 'numpy')()",
    "methodcaller": "import operator\n        a = operator.methodcaller('tolist')(x)",
}


def _host(line: str) -> str:
    return f"import torch\nclass ModelNew:\n    def forward(self, x):\n        {line}\n        return x\n"


def _checks(source: str, dsl: bool = True) -> set[str]:
    return {f.check for f in static_findings(source, dsl=dsl)}


@pytest.mark.parametrize("name", ESCAPES)
def test_escape_into_numpy_is_flagged_in_dsl_host_code(name):
    assert "no_foreign_libraries" in _checks(_host(ESCAPES[name]))


def test_not_flagged_for_pytorch_candidates_or_inside_kernels():
    assert "no_foreign_libraries" not in _checks(_host("a = x.numpy()"), dsl=False)
    jit = "import triton\n@triton.jit\ndef k(x):\n    y = x.tolist\n"
    assert "no_foreign_libraries" not in _checks(jit)


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(size=1, env={"TRITON_INTERPRET": "1"}) as p:
        yield p


@pytest.mark.parametrize("preset,check", [("strict", "no_foreign_libraries"), ("warn", "kernel_launched")])
def test_triton_candidate_computing_with_numpy_is_rejected(pool, preset, check):
    ev = verify_candidate(resolve_task("relu"), "triton-interp", {"source": TRITON_NUMPY}, secret="np",
                          pool=pool, preset=preset, scope="small", timeout_s=300)
    assert (ev.verdict.value, ev.check) == ("rejected", check), ev.evidence


PROBES = {
    "call": "import torch\nclass ModelNew:\n    def forward(self, x):\n        return x if torch.are_deterministic_algorithms_enabled() else x\n",
    "module_alias": "import torch\n_checked = torch.are_deterministic_algorithms_enabled\n",
    "import_from": "from torch import are_deterministic_algorithms_enabled as checked\nchecked()\n",
    "fill_flag": "import torch\nflag = torch.utils.deterministic.fill_uninitialized_memory\n",
    "dispatch_mode": "from torch.utils._python_dispatch import _get_current_dispatch_mode\n",
    "attrgetter": "import operator, torch\nf = operator.attrgetter('are_deterministic_algorithms_enabled')(torch)\n",
}


@pytest.mark.parametrize("name", PROBES)
@pytest.mark.parametrize("dsl", [True, False])
def test_reading_the_checked_call_state_is_flagged_on_every_backend(name, dsl):
    # red-team round 3: a TileLang kernel when deterministic algorithms were on (checked calls), PyTorch
    # when they were off (timed calls) read correct and faster (tests/verify/cases/rt3_timed_path_no_kernel)
    assert "no_mode_probe" in _checks(PROBES[name], dsl=dsl)


def test_an_alias_of_a_torch_compute_function_is_compute_in_dsl_host_code():
    src = ("import torch\nimport torch.nn as nn\n_affine = torch.addcmul\n"
           "class ModelNew(nn.Module):\n    def __init__(self):\n        self.f = torch.nn.functional.relu\n"
           "        self.act = nn.ReLU()\n        self.dt = (torch.float64, torch.int64, torch.bool)\n"
           "    def forward(self, x):\n        y = torch.empty_like(x, dtype=torch.float32)\n"
           "        return isinstance(x, torch.Tensor) and y\n")
    found = [f.message for f in static_findings(src, dsl=True) if f.check == "no_torch_compute"]
    assert len(found) == 2 and "torch.addcmul" in found[0] and "torch.nn.functional.relu" in found[1], found
    assert "no_torch_compute" not in _checks(src, dsl=False)
