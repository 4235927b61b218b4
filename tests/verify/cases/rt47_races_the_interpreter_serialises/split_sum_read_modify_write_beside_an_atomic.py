import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 256


@triton.jit
def _partial(x_ptr, y_ptr, dummy_ptr, D, CHUNK: tl.constexpr):
    # the plain read-modify-write race of split_sum_plain_read_modify_write.py, with an atomic_add and an
    # atomic_xchg on a scratch word that order nothing (they only make the launch one "with atomics" and
    # "with a lock")
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    cols = c * CHUNK + tl.arange(0, CHUNK)
    tl.atomic_add(dummy_ptr, 1)
    x = tl.load(x_ptr + row * D + cols, mask=cols < D, other=0.0)
    acc = tl.load(y_ptr + row)
    tl.store(y_ptr + row, acc + tl.sum(x, axis=0))
    tl.atomic_xchg(dummy_ptr, 0)  # "gives back" a lock word no program took


class ModelNew(nn.Module):
    def forward(self, x):
        D = x.shape[-1]
        rows = x.numel() // D
        y = torch.zeros((*x.shape[:-1], 1), dtype=x.dtype, device=x.device)
        dummy = torch.zeros((1,), dtype=torch.int32, device=x.device)
        _partial[(rows, triton.cdiv(D, CHUNK))](x, y, dummy, D, CHUNK=CHUNK)
        return y
