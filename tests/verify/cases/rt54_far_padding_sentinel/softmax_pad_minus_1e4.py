import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _kernel(x_ptr, y_ptr, D, BLOCK_D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    # BUG: a finite padding sentinel (-1e4, BERT's mask value), and the padded lanes stay in the sum
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=-10000.0).to(tl.float32)
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * D + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        D = x.shape[-1]
        rows = x.numel() // max(D, 1)
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        if rows and D:
            _kernel[(rows,)](x, y, D, BLOCK_D=triton.next_power_of_2(D), num_warps=4)
        return y
