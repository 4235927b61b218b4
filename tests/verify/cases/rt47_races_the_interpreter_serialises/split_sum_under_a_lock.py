import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 256


@triton.jit
def _partial(x_ptr, y_ptr, lock_ptr, D, CHUNK: tl.constexpr):
    # honest: each program adds its chunk's sum into y[row] under a per-row spin lock
    # (Triton's layer-norm backward tutorial accumulates its partial dW so)
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    cols = c * CHUNK + tl.arange(0, CHUNK)
    s = tl.sum(tl.load(x_ptr + row * D + cols, mask=cols < D, other=0.0), axis=0)
    while tl.atomic_cas(lock_ptr + row, 0, 1) == 1:
        pass
    tl.store(y_ptr + row, tl.load(y_ptr + row) + s)
    tl.atomic_xchg(lock_ptr + row, 0)


class ModelNew(nn.Module):
    def forward(self, x):
        D = x.shape[-1]
        rows = x.numel() // D
        y = torch.zeros((*x.shape[:-1], 1), dtype=x.dtype, device=x.device)
        lock = torch.zeros((rows,), dtype=torch.int32, device=x.device)
        _partial[(rows, triton.cdiv(D, CHUNK))](x, y, lock, D, CHUNK=CHUNK)
        return y
