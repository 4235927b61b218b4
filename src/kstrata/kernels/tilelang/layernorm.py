"""Fusion plan: one kernel, ``rpb`` rows per program: y = (x - mean) / sqrt(var + eps) * weight + bias."""

import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

SCHEDULE = {"rpb": 1, "threads": 1}  # kstrata-tune: rpb in {1, 2, 4, 8}


@tilelang.jit(out_idx=[-1])
def layernorm_kernel(rows, d, eps, rpb, threads, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((rows, d), dtype), W: T.Tensor((d,), dtype), Bi: T.Tensor((d,), dtype),
             Y: T.Tensor((rows, d), dtype)):
        with T.Kernel(T.ceildiv(rows, rpb), threads=threads) as b:
            mean = T.alloc_var("float32")
            var = T.alloc_var("float32")
            for i in T.serial(rpb):
                if b * rpb + i < rows:
                    mean = 0.0
                    for j in T.serial(d):
                        mean += X[b * rpb + i, j]
                    mean = mean / d
                    var = 0.0
                    for j in T.serial(d):
                        var += (X[b * rpb + i, j] - mean) * (X[b * rpb + i, j] - mean)
                    var = T.rsqrt(var / d + eps)
                    for j in T.serial(d):
                        Y[b * rpb + i, j] = (X[b * rpb + i, j] - mean) * var * W[j] + Bi[j]

    return main


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.bias = nn.Parameter(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1]
        x2 = x.contiguous().view(-1, d)
        kernel = layernorm_kernel(x2.shape[0], d, self.eps, SCHEDULE["rpb"], SCHEDULE["threads"])
        return kernel(x2, self.weight.detach().contiguous(),
                      self.bias.detach().contiguous()).view(x.shape)
