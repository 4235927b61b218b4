"""Fusion plan: one elementwise kernel over the flattened tensor: q = int8(clamp(round(x / scale), -128, 127))."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024  # kstrata-tune: {256, 512, 1024, 2048, 4096, 8192}
NUM_WARPS = 4  # kstrata-tune: {1, 2, 4, 8, 16}


# tl.math.div_rn: IEEE round-to-nearest division. On a GPU, Triton compiles fp32 `/` to an approximate
# division (up to 2 ulp), which moves round(x / scale) at .5 boundaries: the H200 run read these kernels
# incorrect (tolerance) while the CPU interpreter, which divides exactly, read them correct.
@triton.jit
def _kernel(x_ptr, s_ptr, y_ptr, n, K, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.math.div_rn(tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32), tl.load(s_ptr).to(tl.float32))
    r = tl.floor(v + 0.5)
    odd = (r - 2.0 * tl.floor(r * 0.5)) != 0.0
    r = tl.where(((r - v) == 0.5) & odd, r - 1.0, r)  # round half to even, as torch.round
    y = tl.minimum(tl.maximum(r, -128.0), 127.0).to(tl.int32)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty(x.shape, dtype=torch.int8, device=x.device)
        n = x.numel()
        if n:
            _kernel[(triton.cdiv(n, BLOCK),)](x, scale, y, n, 1, BLOCK=BLOCK, num_warps=NUM_WARPS)
        return y
