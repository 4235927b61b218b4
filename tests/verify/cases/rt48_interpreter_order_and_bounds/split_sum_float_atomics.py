import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 64


@triton.jit
def _partial(x_ptr, y_ptr, D, CHUNK: tl.constexpr):
    # honest: each program adds its chunk's sum into y[row] with a float atomic (split-K style); the order
    # of the additions, and so the last bits, is the GPU's to choose
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    cols = c * CHUNK + tl.arange(0, CHUNK)
    x = tl.load(x_ptr + row * D + cols, mask=cols < D, other=0.0)
    tl.atomic_add(y_ptr + row, tl.sum(x, axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        D = x.shape[-1]
        rows = x.numel() // D
        y = torch.zeros((*x.shape[:-1], 1), dtype=x.dtype, device=x.device)
        _partial[(rows, triton.cdiv(D, CHUNK))](x, y, D, CHUNK=CHUNK)
        return y
