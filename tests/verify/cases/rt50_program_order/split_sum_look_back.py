import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 64


@triton.jit
def _chained(x_ptr, run_ptr, flag_ptr, y_ptr, D, NC, CHUNK: tl.constexpr):
    # a chained (look-back) sum: chunk c waits, spinning on an atomic flag, until chunk c - 1 has published
    # its running sum, adds its own chunk and publishes; the last chunk stores the row's sum. On a GPU this
    # relies on programs being started in grid order (as CUB's single-pass scan does)
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    cols = c * CHUNK + tl.arange(0, CHUNK)
    s = tl.sum(tl.load(x_ptr + row * D + cols, mask=cols < D, other=0.0), axis=0)
    if c > 0:
        while tl.atomic_add(flag_ptr + row * NC + c - 1, 0) == 0:
            pass
        s += tl.load(run_ptr + row * NC + c - 1)
    tl.store(run_ptr + row * NC + c, s)
    tl.atomic_xchg(flag_ptr + row * NC + c, 1)
    if c == NC - 1:
        tl.store(y_ptr + row, s)


class ModelNew(nn.Module):
    def forward(self, x):
        D = x.shape[-1]
        rows = x.numel() // D
        nc = triton.cdiv(D, CHUNK)
        run = torch.zeros((rows, nc), dtype=torch.float32, device=x.device)
        flag = torch.zeros((rows, nc), dtype=torch.int32, device=x.device)
        y = torch.empty((*x.shape[:-1], 1), dtype=x.dtype, device=x.device)
        _chained[(rows, nc)](x, run, flag, y, D, nc, CHUNK=CHUNK)
        return y
