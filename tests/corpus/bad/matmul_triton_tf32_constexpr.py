# corpus: task=matmul_square backend=triton-interp expect=rejected check=no_precision_downgrade
# red-team 2026-12-04: plain TF32 passed to tl.dot through a constexpr (input_precision=PRECISION,
# PRECISION='tf32'); the keyword check saw only a name. One block per program, N a multiple of 32.
import torch
import torch.nn as nn
import triton
import triton.language as tl

MODE = "tf32"


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, N, PRECISION: tl.constexpr, BLOCK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm, rn, rk = pm * BLOCK + tl.arange(0, BLOCK), pn * BLOCK + tl.arange(0, BLOCK), tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, N, BLOCK):
        a = tl.load(a_ptr + rm[:, None] * N + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


class ModelNew(nn.Module):
    def forward(self, A, B):
        n = A.shape[0]
        C = torch.empty_like(A)
        mm[(n // 32, n // 32)](A, B, C, n, PRECISION=MODE, BLOCK=32)
        return C
