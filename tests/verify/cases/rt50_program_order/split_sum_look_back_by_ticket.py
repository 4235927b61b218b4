import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 64


@triton.jit
def _chained(x_ptr, run_ptr, flag_ptr, ticket_ptr, y_ptr, D, NC, CHUNK: tl.constexpr):
    # honest chained (look-back) sum: a program takes its chunk from a per-row atomic ticket, so it waits only
    # for a chunk already handed out to a program that started before it, in whatever order programs start
    row = tl.program_id(0).to(tl.int64)
    c = tl.atomic_add(ticket_ptr + row, 1)
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
        ticket = torch.zeros((rows,), dtype=torch.int32, device=x.device)
        y = torch.empty((*x.shape[:-1], 1), dtype=x.dtype, device=x.device)
        _chained[(rows, nc)](x, run, flag, ticket, y, D, nc, CHUNK=CHUNK)
        return y
