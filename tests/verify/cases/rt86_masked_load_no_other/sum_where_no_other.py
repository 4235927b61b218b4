import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rowsum_kernel(x_ptr, y_ptr, D, stride, BLOCK: tl.constexpr):
    # masked load without `other`, its masked-out lanes dropped by tl.where before the sum: honest on a GPU
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, D, BLOCK):
        o = start + offs
        x = tl.load(x_ptr + row * stride + o, mask=o < D)
        s += tl.where(o < D, x, 0.0)
    tl.store(y_ptr + row, tl.sum(s, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        B, D = x.shape
        y = torch.empty(B, 1, dtype=x.dtype, device=x.device)
        rowsum_kernel[(B,)](x, y, D, x.stride(0), BLOCK=1024)
        return y
