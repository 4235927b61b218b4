import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def maxmean_kernel(x_ptr, y_ptr, D, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, D, BLOCK):
        o = start + offs
        mask = o < D
        x = tl.load(x_ptr + row * stride + o, mask=mask, other=-float("inf"))
        m = tl.maximum(m, x)
        s += tl.where(mask, x, 0.0)
    tl.store(y_ptr + row, tl.max(m, axis=0) - tl.sum(s, axis=0) / D)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        B, D = x.shape
        y = torch.empty(B, dtype=x.dtype, device=x.device)
        maxmean_kernel[(B,)](x, y, D, x.stride(0), BLOCK=1024)
        return y
