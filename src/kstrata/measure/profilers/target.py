"""The process a profiler runs: ``python -m kstrata.measure.profilers.target SPEC.json``.

SPEC holds ``backend``, ``task``, ``sources``, ``shape`` and ``calls``. The
candidate is built and warmed up first; then it is called ``calls`` times
inside the NVTX range :data:`kstrata.measure.profilers.ncu.NVTX_RANGE` (CUDA)
so a profiler can restrict itself to those calls.
"""

from __future__ import annotations

import json
import sys

import torch

from kstrata.backends.registry import get_backend
from kstrata.measure.profilers.ncu import NVTX_RANGE
from kstrata.tasks.loader import resolve_task


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    spec = json.loads(open(argv[0]).read())
    task = resolve_task(spec["task"])
    backend = get_backend(spec["backend"])
    shape = task.full_shape(spec["shape"])
    _, inputs, init_inputs, _ = task.instantiate(shape, seed=0)
    inputs = [x.to(backend.device) if isinstance(x, torch.Tensor) else x for x in inputs]
    torch.manual_seed(0)
    fn = backend.load(task, spec["sources"], shape, init_inputs)
    cuda = backend.device.startswith("cuda")
    with torch.inference_mode():
        for _ in range(2):
            fn(*inputs)
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push(NVTX_RANGE)
        for _ in range(int(spec.get("calls", 1))):
            fn(*inputs)
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()


if __name__ == "__main__":
    main()
