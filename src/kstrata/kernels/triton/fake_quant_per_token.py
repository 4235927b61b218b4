"""Fusion plan: one kernel, one program per row: scale = absmax/127 per row, y = clamp(round_half_even(x/scale), -127, 127) * scale."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_WARPS = 4  # kstrata-tune: {1, 2, 4, 8, 16}


# tl.math.div_rn: IEEE round-to-nearest division. On a GPU, Triton compiles fp32 `/` to an approximate
# division (up to 2 ulp), which moves round(x / scale) at .5 boundaries: the H200 run read these kernels
# incorrect (tolerance) while the CPU interpreter, which divides exactly, read them correct.
@triton.jit
def _kernel(x_ptr, y_ptr, D, BLOCK_D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    scale = tl.math.div_rn(tl.max(tl.abs(x), axis=0), 127.0)
    v = tl.math.div_rn(x, scale)
    r = tl.floor(v + 0.5)
    # round half to even, as torch.round
    odd = (r - 2.0 * tl.floor(r * 0.5)) != 0.0
    r = tl.where(((r - v) == 0.5) & odd, r - 1.0, r)
    y = tl.minimum(tl.maximum(r, -127.0), 127.0) * scale
    tl.store(y_ptr + row * D + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        D = x.shape[-1]
        rows = x.numel() // max(D, 1)
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        if rows and D:
            _kernel[(rows,)](x, y, D, BLOCK_D=triton.next_power_of_2(D), num_warps=NUM_WARPS)
        return y
