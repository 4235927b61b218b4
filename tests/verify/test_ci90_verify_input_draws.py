"""The judge draws a test's inputs for that test only: building the reference at a
shape (each :class:`kstrata.verify.runner.ShapeRun`, the preflight's call at the
costliest shape, the weak-match fakes' models) called ``get_inputs()`` once more
through :meth:`kstrata.tasks.base.Task.instantiate` and dropped what it drew. At
argmax_dim's nominal 16 x 256 x 4096 that draw (a permutation per column) took
3-10 s, three times in one verification at the small scope (31 s of its 70 s on
the loaded 2-core machine; test_reference_against_itself.py verifies it)."""

from __future__ import annotations

import textwrap

import pytest
import torch

from kstrata.sandbox import status
from kstrata.tasks.loader import load_task

TASK = textwrap.dedent('''
    import sys
    import torch
    import torch.nn as nn

    # the flops formula makes the preflight run the reference at the costliest shape
    KSTRATA = {{"shapes": {{"nominal": {{"N": 64}}, "small": [{{"N": 8}}], "sweep": [{{"N": 3}}]}},
                "flops": "N * 1e9", "bytes": "4 * N"}}
    N = 64


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(16))

        def forward(self, x):
            return torch.relu(x * self.w)


    def get_inputs():
        caller = sys._getframe(1)
        if caller.f_code.co_name == "instantiate":  # drawn while building the reference: by whom
            with open({log!r}, "a") as out:
                out.write(caller.f_back.f_code.co_name + "\\n")
        return [torch.randn(N, 16)]


    def get_init_inputs():
        return []
''')

CANDIDATE = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(16))

        def forward(self, x):
            return torch.relu(x * self.w)
''')


def _task(tmp_path):
    log = tmp_path / "drawn_by.txt"
    (tmp_path / "drawn.py").write_text(TASK.format(log=str(log)))
    return load_task(tmp_path / "drawn.py"), log


def test_instantiate_without_inputs_builds_the_same_model_and_draws_nothing(tmp_path):
    task, log = _task(tmp_path)
    model, inputs, init_inputs, module = task.instantiate({"N": 8}, 5)
    assert log.read_text().splitlines() == ["test_instantiate_without_inputs_builds_the_same_model_and_draws_nothing"]
    assert len(inputs) == 1 and inputs[0].shape == (8, 16)
    bare, none, init_bare, module_bare = task.instantiate({"N": 8}, 5, inputs=False)
    assert none == [] and init_bare == init_inputs and module_bare.N == 8
    assert torch.equal(bare.w, model.w)  # the parameters' seed is unchanged
    assert len(log.read_text().splitlines()) == 1  # get_inputs() was not called


@pytest.mark.skipif(not status().usable, reason="no sandbox here")
def test_the_judge_draws_no_inputs_while_building_its_references(tmp_path):
    """Only the callers that use what they draw call ``get_inputs()`` through
    ``instantiate`` (the per-shape check of the task, once a shape in a process; the
    shapes' and the integer inputs' probes); before, every shape run, the preflight,
    the parameter-reload check and the weak-match fakes' models did too."""
    from kstrata.verify import runner

    task, log = _task(tmp_path)
    ev = runner.run_protocol(task, "pytorch", {"source": CANDIDATE}, "d" * 32, scope="small", timeout_s=300.0)
    assert ev["verdict"] == "correct", ev
    drawn_by = log.read_text().splitlines() if log.exists() else []
    assert "check_reference_at" in drawn_by  # the check still runs get_inputs() at each shape
    assert set(drawn_by) <= {"check_reference_at", "safe_shapes", "_probe"}, sorted(drawn_by)
