"""A library the task's reference imports is the task's dependency, and NumPy
computes outside the backend wherever it runs per call (issue #23; the rule
is in kstrata.verify.integrity.static's module docstring). KernelBench L3
30_SwinTransformerV2's own Model builds a constant with ``np.log2(8)`` in
``__init__`` and was rejected against itself (no_foreign_libraries: imports
numpy); L3 48/49_Mamba2 import ``einops.rearrange``. The task files here are
small ones written for the test (no KernelBench file is copied)."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status
from kstrata.tasks.loader import load_task
from kstrata.verify import verify_candidate
from kstrata.verify.integrity.static import static_findings

REFERENCE = '''import numpy as np
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("scale", torch.full((dim,), 8.0).log2() / np.log2(8))

    def forward(self, x):
        return torch.relu(x) * self.scale

batch_size = 8
dim = 64

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return [dim]
'''

PER_CALL = '''
import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("scale", torch.ones(dim))

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0)) * self.scale
'''


def _messages(source: str, reference: str, dsl: bool = False) -> list[str]:
    """Findings, less no_torch_compute (a DSL candidate's torch.relu is that check's business)."""
    return [f"{f.check}: {f.message}" for f in static_findings(source, dsl=dsl, reference=reference)
            if f.check != "no_torch_compute"]


@pytest.mark.parametrize("dsl", [False, True])
def test_the_references_own_text_passes_where_it_imports_numpy_or_einops(dsl):
    assert _messages(REFERENCE + "\nModelNew = Model\n", REFERENCE, dsl) == []
    einops = "from einops import rearrange\nimport torch\n"
    assert _messages(einops + "y = rearrange\n", einops, dsl) == []
    # the same import is foreign where the task's reference does not import it
    assert _messages(REFERENCE, "import torch\n", dsl) == ["no_foreign_libraries: line 1: imports numpy"]
    assert _messages(einops, "import torch\n", dsl) == ["no_foreign_libraries: line 1: imports einops"]


def test_numpy_per_call_or_kept_as_a_value_is_foreign_even_where_the_reference_imports_it():
    found = _messages(PER_CALL, REFERENCE)
    assert found == ["no_foreign_libraries: line 13: uses numpy.maximum in forward (NumPy computes outside the "
                     "backend on every call; only module level and __init__ may build constants with it)"]
    kept = ("import numpy as np\nclass ModelNew:\n    def __init__(self):\n        self.np = np\n"
            "        self.f = np.exp\n        self.c = np.zeros(3, dtype=np.float32) * np.pi\n"
            "        def helper(y):\n            return np.exp(y)\n        self.g = lambda y: np.tanh(y)\n")
    found = _messages(kept, REFERENCE)
    assert [m.split(": ", 2)[1] for m in found] == ["line 4", "line 5", "line 8", "line 9"], found
    assert "keeps numpy as a value" in found[0] and "keeps numpy.exp" in found[1]
    assert "in helper" in found[2] and "in <lambda>" in found[3]


def test_checks_other_than_foreign_libraries_ignore_what_the_reference_imports():
    assert _messages("import os\n", "import os\nimport torch\n") == ["no_file_io: line 1: imports os"]


@pytest.fixture(scope="module")
def pool():
    from kstrata.execute.shared import lend

    with lend() as p:  # this process's warm judge worker, when another module gave one back
        yield p


@pytest.mark.skipif(not status().usable, reason="bubblewrap cannot run here")
def test_verdicts_of_the_references_own_text_and_of_numpy_per_call(tmp_path, pool):
    path = tmp_path / "np_scale.py"
    path.write_text(REFERENCE)
    task = load_task(path)
    own = verify_candidate(task, "pytorch", {"source": REFERENCE + "\nModelNew = Model\n"}, secret="np" * 16,
                           pool=pool, scope="small")
    assert own.verdict.value == "correct", own.evidence
    per_call = verify_candidate(task, "pytorch", {"source": PER_CALL}, secret="np" * 16, pool=pool, scope="small")
    assert (per_call.verdict.value, per_call.check) == ("rejected", "no_foreign_libraries"), per_call.evidence
