"""Fusion plan: one kernel, one program per row: y = x / sqrt(mean(x^2) + eps) * weight."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_WARPS = 4  # kstrata-tune: {1, 2, 4, 8, 16}
# 1: the two-pass kernel over chunks of CHUNK columns (long rows), 0: one pass over the whole row
TWO_PASS = 0  # kstrata-tune: {0, 1}
CHUNK = 2048  # kstrata-tune: {512, 1024, 2048, 4096, 8192} if TWO_PASS


@triton.jit
def _kernel(x_ptr, w_ptr, y_ptr, D, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)
    y = x * rstd * w
    tl.store(y_ptr + row * D + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _kernel_two_pass(x_ptr, w_ptr, y_ptr, D, eps, CHUNK: tl.constexpr):
    # pass 1: sum of squares over chunks; pass 2: normalize
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, CHUNK)
    acc = tl.zeros((CHUNK,), tl.float32)
    for c0 in range(0, D, CHUNK):
        x = tl.load(x_ptr + row * D + c0 + cols, mask=c0 + cols < D, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / D + eps)
    for c0 in range(0, D, CHUNK):
        mask = c0 + cols < D
        x = tl.load(x_ptr + row * D + c0 + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + c0 + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * D + c0 + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        D = x.shape[-1]
        rows = x.numel() // max(D, 1)
        y = torch.empty_like(x)
        if rows and D:
            if TWO_PASS:
                _kernel_two_pass[(rows,)](x, self.weight, y, D, self.eps, CHUNK=min(CHUNK, triton.next_power_of_2(D)),
                                          num_warps=NUM_WARPS)
            else:
                _kernel[(rows,)](x, self.weight, y, D, self.eps, BLOCK_D=triton.next_power_of_2(D), num_warps=NUM_WARPS)
        return y
