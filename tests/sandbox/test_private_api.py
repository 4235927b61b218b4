"""``no_private_api`` (red-team round 4): a candidate must not reach the
private machinery of torch or triton, where the switches of the candidate
process's records lie (``torch._C._DisableTorchDispatch`` turns the dispatch
mode that records PyTorch compute off), by any written-out path: an alias of
torch that another module holds, a module reached through another module's
attribute, a private name in a string, an alias bound by assignment. The
check is an error in every preset; paths it cannot read (computed names) are
``no_introspection`` and the run-time records (``test_function_record``)."""

from __future__ import annotations

import pytest

from kstrata.verify.integrity.static import static_findings


def checks(src: str, dsl: bool = True) -> set[str]:
    return {f.check for f in static_findings(src, dsl=dsl)}


@pytest.mark.parametrize("src", [
    "import torch._dynamo.utils\n_t = torch._dynamo.utils.torch\n",
    "import torch\nwith torch._C._DisableTorchDispatch():\n    pass\n",
    "import torch\n_t = torch\ndef f():\n    return _t._C\n",
    "import torch\nt = torch.nn.functional.torch\nt2 = t\nt2.relu\n",
    "from torch.utils import _python_dispatch\n",
    "from torch._C import _DisableTorchDispatch as off\n",
    "import torch\nf = getattr(torch, '_C')\n",
    "import importlib\nm = importlib.import_module('torch._C')\n",
    "import operator\nimport torch\nf = operator.attrgetter('_C._DisableTorchDispatch')(torch)\n",
    "import torch\ndef f(x):\n    return x._C\n",
    "import torch\nx = torch.utils._python_dispatch._disable_current_modes\n",
])
def test_private_paths_are_rejected_in_every_backend(src):
    assert "no_private_api" in checks(src, dsl=True)
    assert "no_private_api" in checks(src, dsl=False)


@pytest.mark.parametrize("src, check", [
    ("import torch\n_os = torch.cuda.os\n_os.system('x')\n", "no_file_io"),
    ("import torch\nth = torch.cuda.threading\n", "no_threads"),
    ("import torch.cuda\nfrom torch.cuda import os as o\n", "no_file_io"),
    ("import torch\ng = torch.cuda.sys\n", "no_introspection"),
    ("import torch\nt = torch.nn.functional.torch\n", "no_private_api"),
    ("import tilelang\nx = tilelang.language.os.system\n", "no_file_io"),  # a root not imported here: by name
])
def test_a_module_reached_through_another_modules_attribute_is_that_module(src, check):
    assert check in checks(src)


def test_the_preset_warn_rejects_it():
    from kstrata.verify.integrity.registry import preset

    assert preset("warn")["no_private_api"] == "error" and preset("strict")["no_private_api"] == "error"


@pytest.mark.parametrize("src", [
    # its own private names, docstrings, f-strings, public paths of torch and triton
    "class M:\n    def __init__(self):\n        self._cache = {}\n    def f(self):\n        return self._cache\n",
    "import torch\nimport triton.language as tl\nx = tl.math.exp\ny = torch.nn.functional.relu\nz = torch.linalg\n",
    '"""_private in a docstring"""\nname = 3\ns = f"{name}_kernel"\n',
    "import torch\nx = torch.__version__\nd = torch.float32\n",
    "def _helper(_n):\n    return _n\nk = _helper(_n=3)\n",
])
def test_honest_code_is_not_flagged(src):
    assert "no_private_api" not in checks(src)


def test_the_shipped_good_candidates_pass():
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parents[1] / "corpus" / "good").glob("*.py")):
        assert "no_private_api" not in checks(path.read_text(), dsl="triton" in path.name), path.name


def test_function_record_sees_compute_the_dispatch_switch_hides():
    """The candidate process's second record (a function mode) sees what the
    dispatch mode misses under ``torch._C._DisableTorchDispatch``."""
    import torch

    from kstrata.verify.integrity.ops import Recorders, compute_name

    x = torch.randn(4, 4)
    with Recorders() as r:
        y = torch.empty_like(x)
        y.copy_(x)
        with torch._C._DisableTorchDispatch():
            torch.nn.ReLU()(x)
    assert r.dispatch.compute_ops() == [] and r.compute_ops() == ["relu"]
    assert [compute_name(n) for n in ("__radd__", "add_", "relu.default", "cpu", "data_ptr",
                                      "is_floating_point", "__index__")] == ["add", "add", "relu"] + [None] * 4
