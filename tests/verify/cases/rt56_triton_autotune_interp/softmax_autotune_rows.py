import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"CHUNK": 64}), triton.Config({"CHUNK": 256}),
                          triton.Config({"CHUNK": 1024})], key=["n_cols"])
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * n_cols
    m = tl.full((CHUNK,), float("-inf"), tl.float32)
    s = tl.zeros((CHUNK,), tl.float32)
    for start in range(0, n_cols, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new)) \
            + tl.where(x == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    mx = tl.max(m, 0)
    total = tl.sum(s * tl.where(m == float("-inf"), 0.0, tl.exp(m - mx)), 0)
    for start in range(0, n_cols, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf"))
        tl.store(y_ptr + base + cols, tl.exp(x - mx) / total, mask=cols < n_cols)


class ModelNew(nn.Module):
    """An honest online softmax, one program per row, its chunk width autotuned."""

    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1])
        return y
