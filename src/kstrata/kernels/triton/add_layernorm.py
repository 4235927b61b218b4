"""Fusion plan: one kernel, one program per row: s = x + r, then layer norm of s (the add fused into the norm)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_WARPS = 4  # kstrata-tune: {1, 2, 4, 8, 16}


@triton.jit
def _kernel(x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, D, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    x += tl.load(r_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / D
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / D + eps)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = xc * rstd * w + b
    tl.store(y_ptr + row * D + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.bias = nn.Parameter(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        D = x.shape[-1]
        rows = x.numel() // max(D, 1)
        y = torch.empty_like(x)
        if rows and D:
            _kernel[(rows,)](x, r.contiguous(), self.weight, self.bias, y, D, self.eps, BLOCK_D=triton.next_power_of_2(D), num_warps=NUM_WARPS)
        return y
