# corpus: task=tasks/fused_exp_mean.py backend=triton-interp expect=incorrect check=tolerance
# Padding through exp: masked lanes load other=0.0, and exp(0) = 1 is summed into the mean.
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def exp_mean_kernel(x_ptr, y_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    s = 0.0
    for start in range(0, D, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * D + offs, mask=offs < D, other=0.0)  # BUG: exp(0) = 1 leaks in
        s += tl.sum(tl.exp(x), 0)
    tl.store(y_ptr + row, s / D)


import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        y = torch.empty(x.shape[0], dtype=x.dtype)
        exp_mean_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=64)
        return y
