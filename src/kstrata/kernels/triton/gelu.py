"""Fusion plan: one kernel, y = x * Phi(x) with the exact erf form (F.gelu default), elementwise over the flattened input."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024  # kstrata-tune: {256, 512, 1024, 2048, 4096, 8192}
NUM_WARPS = 4  # kstrata-tune: {1, 2, 4, 8, 16}


@triton.jit
def _kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=NUM_WARPS)
        return y
