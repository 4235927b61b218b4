"""Fusion plan: one kernel, one program per row: y = sum(x) over the last axis (keepdim)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_WARPS = 4  # kstrata-tune: {1, 2, 4, 8, 16}


@triton.jit
def _kernel(x_ptr, y_ptr, D, BLOCK_D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row, tl.sum(x, axis=0).to(y_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        D = x.shape[-1]
        rows = x.numel() // max(D, 1)
        y = torch.empty((*x.shape[:-1], 1), dtype=x.dtype, device=x.device)
        if rows and D:
            _kernel[(rows,)](x, y, D, BLOCK_D=triton.next_power_of_2(D), num_warps=NUM_WARPS)
        return y
