"""Fusion plan: one kernel, ``rpb`` rows per program: y = x / sqrt(mean(x^2) + eps) * weight."""

import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

SCHEDULE = {"rpb": 1, "threads": 1}  # kstrata-tune: rpb in {1, 2, 4, 8}


@tilelang.jit(out_idx=[-1])
def rmsnorm_kernel(rows, d, eps, rpb, threads, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((rows, d), dtype), W: T.Tensor((d,), dtype), Y: T.Tensor((rows, d), dtype)):
        with T.Kernel(T.ceildiv(rows, rpb), threads=threads) as b:
            acc = T.alloc_var("float32")
            for i in T.serial(rpb):
                if b * rpb + i < rows:
                    acc = 0.0
                    for j in T.serial(d):
                        acc += X[b * rpb + i, j] * X[b * rpb + i, j]
                    acc = T.rsqrt(acc / d + eps)
                    for j in T.serial(d):
                        Y[b * rpb + i, j] = X[b * rpb + i, j] * acc * W[j]

    return main


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1]
        x2 = x.contiguous().view(-1, d)
        kernel = rmsnorm_kernel(x2.shape[0], d, self.eps, SCHEDULE["rpb"], SCHEDULE["threads"])
        return kernel(x2, self.weight.detach().contiguous()).view(x.shape)
