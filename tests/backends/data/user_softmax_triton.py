"""A user's Triton softmax without kstrata-tune markers: literal launch keywords only
(test data for tests/backends/test_triton_tune_rules.py and tests/agents/test_triton_builtin.py)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + pid * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + pid * n_cols + offs, e / tl.sum(e, axis=0), mask=offs < n_cols)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](
            x, y, x.shape[1],
            BLOCK_SIZE=1024, num_warps=4,
        )
        return y
