import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra import libdevice

ROWS = 4
BLOCK_K = 256
NUM_WARPS = 4


@triton.jit
def _quant_rows(x_ptr, s_ptr, y_ptr, N, K, ROWS: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    rows = pid_m * ROWS + tl.arange(0, ROWS)
    cols = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    row0 = pid_m * ROWS
    s = tl.load(s_ptr + row0).to(tl.float32)
    mask = (rows[:, None] < N) & (cols[None, :] < K)
    offs = rows[:, None].to(tl.int64) * K + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    v = tl.math.div_rn(x, s)
    r = libdevice.rint(v)
    r = tl.minimum(tl.maximum(r, -128.0), 127.0)
    tl.store(y_ptr + offs, r.to(tl.int8), mask=mask)


class ModelNew(nn.Module):
    def forward(self, w: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        w = w.contiguous()
        N, K = w.shape
        y = torch.empty((N, K), dtype=torch.int8, device=w.device)
        if N and K:
            grid = (triton.cdiv(N, ROWS), triton.cdiv(K, BLOCK_K))
            _quant_rows[grid](w, scale, y, N, K, ROWS=ROWS, BLOCK_K=BLOCK_K, num_warps=NUM_WARPS)
        return y
