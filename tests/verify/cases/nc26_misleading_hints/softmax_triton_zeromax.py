import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def softmax_kernel(x_ptr, y_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = tl.zeros([BLOCK], tl.float32)
    for start in range(0, D, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * D + offs, mask=offs < D, other=0.0)
        m = tl.maximum(m, v)
    mx = tl.max(m, 0)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, D, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * D + offs, mask=offs < D, other=float("-inf"))
        s += tl.exp(v - mx)
    tot = tl.sum(s, 0)
    for start in range(0, D, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * D + offs, mask=offs < D, other=float("-inf"))
        tl.store(y_ptr + row * D + offs, tl.exp(v - mx) / tot, mask=offs < D)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        B, D = x.shape
        softmax_kernel[(B,)](x, y, D, BLOCK=1024)
        return y
