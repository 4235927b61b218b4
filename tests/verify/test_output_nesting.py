"""A candidate is a drop-in replacement for the reference: its output has the
reference's nesting of tuples and lists, not only the same tensors. Outputs
are compared flattened, so before this check ``[[y]]`` passed for ``y``."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status, wire
from kstrata.tasks.loader import resolve_task

needs_sandbox = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")

#: a task whose reference returns two tensors as a tuple
PAIR_TASK = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """relu and its negation, as a pair"""

    def forward(self, x):
        return (torch.relu(x), -x)


batch_size = 16
dim = 64


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''

RELU = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        return RESULT
'''


@pytest.fixture(scope="module")
def pool():
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for

    p = pool_for(get_backend("pytorch"))
    yield p
    p.close()


def _verify(pool, task, result: str):
    from kstrata.verify import verify_candidate

    return verify_candidate(task, "pytorch", {"source": RELU.replace("RESULT", result)}, secret="n3st1ng" * 3,
                            pool=pool, scope="small", preset="warn")


def test_nesting_tells_a_tensor_from_a_wrapped_one_and_tuples_equal_lists():
    assert wire.nesting("t") == "x"
    assert wire.nesting(["t"]) == ["x"]
    assert wire.nesting([["t"]]) == [["x"]]
    assert wire.nesting(("a", "b")) == wire.nesting(["a", "b"]) == ["x", "x"]
    deep: list = ["t"]
    for _ in range(100):
        deep = [deep]
    assert "deep" in str(wire.nesting(deep))  # bounded, no RecursionError
    assert wire.show_nesting(wire.nesting(("a", ["b"]))) == "(tensor, (tensor,))"
    assert wire.show_nesting("x") == "tensor"


@needs_sandbox
@pytest.mark.parametrize("result", ["[[y]]", "(y,)", "[y]"])
def test_a_wrapped_output_is_rejected_with_both_nestings_named(pool, result):
    ev = _verify(pool, resolve_task("relu"), result)
    d = ev.to_dict()
    assert (ev.verdict.value, ev.check) == ("rejected", "output_type"), d
    assert "where the reference returns tensor" in str(d), d


@needs_sandbox
def test_the_plain_output_passes(pool):
    ev = _verify(pool, resolve_task("relu"), "y")
    assert ev.verdict.value == "correct", ev.to_dict()


@needs_sandbox
def test_a_pair_may_come_back_as_a_list_but_not_flattened_differently(pool, tmp_path):
    path = tmp_path / "relu_pair.py"
    path.write_text(PAIR_TASK)
    task = resolve_task(str(path))
    assert _verify(pool, task, "[y, -x]").verdict.value == "correct"
    ev = _verify(pool, task, "((y,), -x)")
    assert (ev.verdict.value, ev.check) == ("rejected", "output_type"), ev.to_dict()
    assert "(tensor, tensor)" in str(ev.to_dict())
