"""One test's reference and inputs drawn as the judge drew them, and the
feedback item that says how (``kstrata eval --show-hidden``, the caller's own
secret: newcomer nc25 saw a hidden failure's shape, seed and draw but could
not rebuild its inputs to look at the wrong elements).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from kstrata.tasks.inputs import draw_inputs


def draw_test(task: Any, shape: dict[str, int], param_seed: int, seed: int, dist: str,
              device: str = "cpu") -> tuple[torch.nn.Module, list[Any]]:
    """The reference model and inputs of one test, as the judge builds them for
    a public test (and for a hidden one that ``--show-hidden`` reveals, which is
    drawn as a public one): ``task.instantiate(shape, param_seed)``, then
    :func:`kstrata.tasks.inputs.draw_inputs` with ``seed`` and ``dist``.

    Parameters
    ----------
    task:
        A :class:`kstrata.tasks.base.Task` (``kstrata.load_task(path)``).
    shape:
        ``{size name: value}`` of the test.
    param_seed, seed:
        The test's parameter seed (the model's weights) and input seed.
    dist:
        One of :data:`kstrata.tasks.inputs.DISTRIBUTIONS`.
    device:
        Where the inputs are drawn (a CUDA device draws other values than the CPU).

    Returns
    -------
    (model, inputs):
        The reference ``Model`` in eval mode on the CPU and the inputs on the CPU.

    Raises
    ------
    kstrata.tasks.loader.TaskError, ValueError
        For a task that does not build at ``shape`` or an unknown distribution.
    """
    model, _, _, module = task.instantiate(shape, param_seed)
    xs, _ = draw_inputs(module.get_inputs, seed, dist, task.meta.dist_inputs, device=device,
                        fixed=task.meta.fixed_inputs)
    return model, xs


def reproduce_item(task: Any, test: Any, device: str, level: str) -> dict[str, Any]:
    """A ``reproduce`` feedback item: Python lines that draw ``test``'s reference
    and inputs with :func:`draw_test` (``test``: a
    :class:`kstrata.verify.plan.TestCase`; ``device``: the backend's)."""
    from kstrata.verify.feedback import item

    shape = test.shape_dict
    dev = f", device={device!r}" if device != "cpu" else ""
    code = (f"from kstrata import load_task; from kstrata.verify.reproduce import draw_test; "
            f"model, xs = draw_test(load_task({str(Path(task.path).resolve())!r}), {shape!r}, {test.param_seed}, {test.seed}, "
            f"{test.dist!r}{dev}); expected = model(*xs)")
    return item("reproduce", level, f"to reproduce this test's inputs and the reference's outputs: {code}",
                code=code, shape=shape, param_seed=test.param_seed, seed=test.seed, distribution=test.dist)
