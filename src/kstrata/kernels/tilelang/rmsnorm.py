"""Fusion plan: one kernel, one program per row: y = x / sqrt(mean(x^2) + eps) * weight."""

import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

SCHEDULE = {"threads": 1}


@tilelang.jit(out_idx=[-1])
def rmsnorm_kernel(rows, d, eps, threads, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((rows, d), dtype), W: T.Tensor((d,), dtype), Y: T.Tensor((rows, d), dtype)):
        with T.Kernel(rows, threads=threads) as r:
            acc = T.alloc_var("float32")
            acc = 0.0
            for j in T.serial(d):
                acc += X[r, j] * X[r, j]
            acc = T.rsqrt(acc / d + eps)
            for j in T.serial(d):
                Y[r, j] = X[r, j] * acc * W[j]

    return main


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1]
        x2 = x.contiguous().view(-1, d)
        kernel = rmsnorm_kernel(x2.shape[0], d, self.eps, SCHEDULE["threads"])
        return kernel(x2, self.weight.detach().contiguous()).view(x.shape)
