"""Fusion plan: one elementwise kernel over the flattened tensor: y = (q - zero_point) * scale."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024  # kstrata-tune: {256, 512, 1024, 2048, 4096, 8192}
NUM_WARPS = 4  # kstrata-tune: {1, 2, 4, 8, 16}


@triton.jit
def _kernel(x_ptr, z_ptr, s_ptr, y_ptr, n, K, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    q = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.int32)
    y = (q - tl.load(z_ptr)).to(tl.float32) * tl.load(s_ptr).to(tl.float32)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def forward(self, q: torch.Tensor, zero_point: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        q = q.contiguous()
        y = torch.empty(q.shape, dtype=scale.dtype, device=q.device)
        n = q.numel()
        if n:
            _kernel[(triton.cdiv(n, BLOCK),)](q, zero_point, scale, y, n, 1, BLOCK=BLOCK, num_warps=NUM_WARPS)
        return y
