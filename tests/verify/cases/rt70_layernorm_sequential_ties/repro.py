"""False reject, fixed (red-team rt70): an honest layernorm whose mean and variance are float32 sums
taken left to right (a plain CPU loop, a TVM row reduction without rfactor) at the sweep's B=17, D=65537
on the `ties` draw (every 4th element of a row the power of two above the draw's max: one-signed partial
sums that drift) was outside tolerance at 5 elements (max error 2.2e-4), seeds 0 and 1, before and after
rt70's ordered-sum bound. The reordered-reduction allowance moved the mean and the variance by random
signs in 2 independent draws; where both draws gave them the same relative sign, their effects cancelled
at the elements where (x - mean) / std made them equal, and the allowance there was ~4e-6. Now the
second draw flips the first's signs of every other summing op (tolerance_reduction._Perturb._sign).
Run: .venv/bin/python tests/verify/cases/rt70_layernorm_sequential_ties/repro.py
Expected: every line 'ok' (before the fix: 'FALSE REJECT 5 elements, max error 0.000223' and 0.000236)."""
import numpy as np
import torch

from kstrata.tasks.inputs import apply_distribution
from kstrata.tasks.loader import resolve_task
from kstrata.verify.tolerance import compare
from kstrata.verify.tolerance_reduction import reduction_allowance


def seqsum(a: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.cumsum(a.numpy(), axis=-1, dtype=np.float32)[:, -1:].copy())


task = resolve_task("layernorm")
for seed in (0, 1):
    model, inputs, _, _ = task.instantiate({"B": 17, "D": 65537}, seed)
    x = apply_distribution(inputs, "ties", seed)[0]
    m64 = model.double()
    with torch.no_grad():
        oracle = m64(x.double())
        extra, _ = reduction_allowance(m64, [x.double()], [oracle], torch.float32, seed=seed)
        model = model.float()
        ref = model(x)
        n = x.shape[-1]
        mean = seqsum(x) / n
        var = seqsum((x - mean) ** 2) / n
        y = (x - mean) / torch.sqrt(var + model.eps) * model.weight + model.bias
    r = compare(y, oracle, ref, task.meta.tolerance, extra[0])
    print(seed, "ok" if r.ok else f"FALSE REJECT {r.stats['wrong']} elements, max error {r.stats['max_err']:.3g}")
