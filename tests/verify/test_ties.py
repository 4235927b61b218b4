"""Index outputs compared tie-aware (:mod:`kstrata.verify.ties`)."""

from __future__ import annotations

import torch

from kstrata.verify.ties import tie_equivalent, tie_prone_draw


def _grid(*shape: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-4, 5, shape, generator=g).float() / 4  # nine values: ties everywhere


def _last_argmax(x: torch.Tensor, d: int) -> torch.Tensor:
    return (x.shape[d] - 1) - torch.argmax(torch.flip(x, dims=[d]), dim=d)


def test_argmax_and_argmin_picking_another_of_equal_values_are_equivalent():
    x = _grid(6, 40, 7)
    for d in range(3):
        ref, cand = torch.argmax(x, d), _last_argmax(x, d)
        assert not torch.equal(ref, cand)  # the draw ties: the indices differ
        assert tie_equivalent(cand, ref, [x])
        assert tie_equivalent(cand.unsqueeze(d), ref.unsqueeze(d), [x])  # keepdim
        assert tie_equivalent((x.shape[d] - 1) - torch.argmin(torch.flip(x, dims=[d]), dim=d), torch.argmin(x, d), [x])


def test_a_wrong_index_is_not_equivalent():
    x = _grid(5, 33)
    x[1:, -1] = 2.0  # the largest value of four rows, in their last column
    ref = torch.argmax(x, 1)
    wrong = torch.argmax(x[:, :-1], 1)  # the last column never looked at
    assert not torch.equal(ref, wrong) and not tie_equivalent(wrong, ref, [x])
    assert not tie_equivalent(ref.clamp_max(0) - 1, ref, [x])  # out of range
    assert not tie_equivalent(ref.float(), ref, [x])  # not an integer output


def test_sort_and_topk_indices_among_ties_bfloat16():
    x = torch.randn(8, 4096, generator=torch.Generator().manual_seed(1)).bfloat16()
    ref = torch.sort(x, dim=1, stable=True).indices
    cand = torch.sort(x, dim=1, descending=True, stable=True).indices.flip(1)  # ties in reverse order
    assert not torch.equal(ref, cand) and tie_equivalent(cand, ref, [x])
    rt = torch.topk(x, 50, dim=1).indices
    ct = torch.sort(x, dim=1, descending=True, stable=True).indices.flip(1).flip(1)[:, :50]
    assert tie_equivalent(ct, rt, [x])
    dup = ref.clone()
    dup[:, 1] = dup[:, 0]  # an index repeated: not a permutation, whatever the values
    x0 = torch.zeros(8, 4096).bfloat16()
    assert not tie_equivalent(dup, ref, [x0])


def test_only_the_grid_draw_is_tie_prone():
    assert tie_prone_draw("grid") and not tie_prone_draw("normal") and not tie_prone_draw("uniform")
