# corpus: task=relu backend=triton-interp expect=rejected check=no_torch_compute
# Launches a kernel for show and computes the result with host tensor arithmetic.
# (caught at run time by no_torch_compute, which sees the ATen ops however they are reached; kernel_does_work is the second line of defence)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        scratch = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 128),)](x, scratch, x.numel(), BLOCK=128)
        return x * (x > 0)
