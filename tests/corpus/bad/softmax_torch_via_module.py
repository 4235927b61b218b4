# corpus: task=softmax backend=triton-interp expect=rejected check=no_torch_compute
# The softmax runs in PyTorch through an nn.Softmax module (no torch.softmax call for a static
# check to find); the Triton kernel only copies the result.
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ref = nn.Softmax(dim=-1)
    def forward(self, x):
        y = self.ref(x)
        out = torch.empty_like(y)
        n = y.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](y, out, n, BLOCK=1024)
        return out
