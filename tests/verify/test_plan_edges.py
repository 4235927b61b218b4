"""Hidden shapes land on residues the fixed sweeps miss, and heavy-tailed draws
put their extremes at the buffers' edges (red-team cases 36 and 37)."""

from __future__ import annotations

import torch

from kstrata.tasks.inputs import apply_distribution
from kstrata.tasks.loader import resolve_task
from kstrata.tasks.meta import Tolerance
from kstrata.verify.domain import in_domain
from kstrata.verify.plan import PERTURB_MAX, PERTURB_RESIDUES, perturbed_shapes


def test_perturbed_sizes_are_2_mod_4_or_4_mod_8_for_every_secret():
    """Each perturbed size above 8 lands 2 mod 4 (first variant) or 4 mod 8 (second),
    within PERTURB_MAX of a sweep size (a variant of the all-small sweep shape is
    dropped as equal to it, so the positions in the list may shift)."""
    task = resolve_task("softmax")
    seen = set()
    for k in range(40):
        shapes = perturbed_shapes(task, f"secret-{k}")
        assert shapes
        for shape in shapes:
            for name, v in shape.items():
                if v <= 8:
                    continue
                base = {s[name] for s in task.sweep_shapes}
                assert any(1 <= abs(v - b) <= PERTURB_MAX for b in base)
                hit = [(m, res) for m, res in PERTURB_RESIDUES if v % m == res]
                assert hit, (k, shape)
                seen.update(hit)
    assert seen == set(PERTURB_RESIDUES)


def test_heavy_tailed_extremes_sit_at_both_ends():
    for seed in range(50):
        a, b, n = apply_distribution([torch.randn(7, 13), torch.randn(91), torch.randint(0, 3, (4,))],
                                     "heavy_tailed", seed)
        fa, fb = a.reshape(-1), b.reshape(-1)
        assert fa[-1] == fa.max() and fa[0] == fa.min()
        assert fb[-1] == fb.min() and fb[0] == fb.max()
        assert n.dtype == torch.int64  # integers untouched


def test_in_domain_mask_keeps_the_rows_the_reference_got_right():
    ref = torch.tensor([1.0, float("inf"), 2.0, float("nan")])
    oracle = torch.tensor([1.0, 3.0e38 * 10, 2.0, 5.0], dtype=torch.float64)
    mask = in_domain(ref, oracle, Tolerance())
    assert mask.tolist() == [True, False, True, False]
    assert in_domain(torch.tensor([1, 2]), torch.tensor([1, 2]), Tolerance()) is None
