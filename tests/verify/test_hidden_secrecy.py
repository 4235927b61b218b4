"""A candidate failing only on a hidden test learns nothing of that test
(issue #17 item 11): no element count or shape of it in the evaluation's
JSON (once scrubbed), the feedback, or the MCP answer."""

from __future__ import annotations

import json
import re

import pytest

from kstrata.serve.service import evaluate, load_backend
from kstrata.tasks.loader import load_task
from kstrata.verify.feedback import scrub_hidden
from kstrata.verify.plan import perturbed_shapes
from kstrata.verify.runner import run_protocol

TASK = '''import torch
import torch.nn as nn

KSTRATA = {"shapes": {"nominal": {"N": 64}, "small": [{"N": 16}], "sweep": [{"N": 1001}]}}
N = 64

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.randn(N)]

def get_init_inputs():
    return []
'''

# right at the public sizes (16 and the nominal 64), one element wrong elsewhere
ONLY_PUBLIC = '''import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.relu(x)
        if x.numel() not in (16, 64):
            out[0] += 1.0
        return out
'''
SECRET = "hidden-secrecy"


def _hidden_sizes(task) -> set[str]:
    sizes = {1001} | {s["N"] for s in perturbed_shapes(task, SECRET)}
    return {str(n) for n in sizes}


def _leaks(text: str, sizes: set[str]) -> list[str]:
    """The hidden sizes that appear as whole integers in ``text`` (not inside a
    decimal such as a time, ``"wall_s": 10.994``, which once read as size 994)."""
    return [n for n in sizes if re.search(rf"(?<![\d.]){n}(?!\d|\.\d)", text)]


@pytest.mark.slow
def test_hidden_failure_reveals_no_element_count_or_shape(tmp_path):
    (tmp_path / "t.py").write_text(TASK)
    task = load_task(tmp_path / "t.py")
    sizes = _hidden_sizes(task)
    ev = run_protocol(task, "pytorch", {"source": ONLY_PUBLIC}, SECRET, scope="full")
    assert ev["verdict"] == "incorrect" and ev["evidence"]["stage"] == "hidden"
    assert not _leaks(json.dumps(ev["feedback"]), sizes)
    clean = scrub_hidden(ev)
    assert clean["verdict"] == "incorrect" and clean["evidence"]["stage"] == "hidden"
    assert not _leaks(json.dumps(clean), sizes), clean["evidence"]
    assert "hidden test" in clean["evidence"]["message"]
    # public evidence is left alone
    pub = {"evidence": {"stage": "public", "message": "3 of 16 elements", "test": {"shape": {"N": 16}}}}
    assert scrub_hidden(pub) == pub

    # the MCP evaluate answer (service.evaluate's public view)
    out = evaluate(task, load_backend("pytorch"), {"source": ONLY_PUBLIC}, secret=SECRET, time_it=False)
    assert out.verdict == "incorrect"
    text = json.dumps(out.public)
    assert not _leaks(text, sizes), text


SIZED_TASK = TASK.replace("    def forward(self, x):", "    def __init__(self, n):\n        super().__init__()\n\n"
                          "    def forward(self, x):").replace("return []", "return [N]")

# loads at the public sizes; at any other, raises with the size in its message
LOADS_PUBLIC_ONLY = '''import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        if n not in (16, 64):
            raise ValueError(f"no kernel for n={n} (shape ({n},))")

    def forward(self, x):
        return torch.relu(x)
'''


def test_load_failure_at_a_hidden_shape_reveals_no_size(tmp_path):
    """The hidden stage's loads are hidden tests: a compile or load error there is named by its
    exception type only, with no traceback or output tail (a compiler's message names the shape)."""
    (tmp_path / "t.py").write_text(SIZED_TASK)
    task = load_task(tmp_path / "t.py")
    sizes = _hidden_sizes(task)
    ev = run_protocol(task, "pytorch", {"source": LOADS_PUBLIC_ONLY}, SECRET, scope="full")
    assert ev["verdict"] == "compile_error", ev["evidence"]
    assert "hidden" in ev["evidence"]["message"]
    assert "ValueError" in ev["evidence"]["message"]
    assert not _leaks(json.dumps({k: ev[k] for k in ("evidence", "feedback")}), sizes), ev["evidence"]
