# corpus: task=softmax backend=triton-interp expect=correct
# Control: online softmax with rescaling.
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def softmax_kernel(x_ptr, y_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = -float("inf")
    s = 0.0
    for start in range(0, D, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * D + offs, mask=offs < D, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(x, 0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m = m_new
    for start in range(0, D, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * D + offs, mask=offs < D, other=-float("inf"))
        tl.store(y_ptr + row * D + offs, tl.exp(x - m) / s, mask=offs < D)


import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=256)  # several blocks a row at D = 512 and the sweep
        return y
