# corpus: task=relu backend=triton-interp expect=rejected check=no_torch_compute
# red-team 2026-12-04: the ReLU in Tensor.apply_ (a Python function per element on the host), the kernel only copies.
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _relu1(v):
    return v if v > 0.0 else 0.0


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=m, other=0.0), mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        r = torch.empty_like(x)
        r.copy_(x)
        r.apply_(_relu1)          # the ReLU, element by element in Python, outside the DSL
        y = torch.empty_like(x)
        n = x.numel()
        _copy[(triton.cdiv(n, 1024),)](r, y, n, BLOCK=1024)   # the 'kernel' only copies
        return y
