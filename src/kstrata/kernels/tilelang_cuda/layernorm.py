"""Fusion plan: one kernel, y = (x - mean) / sqrt(var + eps) * weight + bias over the
last axis. A program owns ``bm`` rows and walks them in steps of ``bk`` columns
(``bm * bk = block``; short rows share a program). Pass 1 sums x per lane, one
``T.reduce_sum`` per row gives the mean; pass 2 sums (x - mean)^2 the same way (the
two-pass variance, no cancellation; the row is back from L2); pass 3 writes
(x - mean) * rstd * weight + bias. Lanes past the row end are skipped, never padded."""

import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

SCHEDULE = {"block": 2048, "threads": 256}  # kstrata-tune: block in {512, 1024, 2048, 4096}; threads in {64, 128, 256, 512} on cuda


@tilelang.jit(out_idx=[-1])
def layernorm_kernel(rows, d, eps, bm, bk, threads, dtype="float32"):
    steps = (d + bk - 1) // bk

    @T.prim_func
    def main(X: T.Tensor((rows, d), dtype), W: T.Tensor((d,), dtype), Bi: T.Tensor((d,), dtype),
             Y: T.Tensor((rows, d), dtype)):
        with T.Kernel(T.ceildiv(rows, bm), threads=threads) as bx:
            acc = T.alloc_fragment((bm, bk), "float32")
            mean = T.alloc_fragment((bm,), "float32")
            rstd = T.alloc_fragment((bm,), "float32")
            T.clear(acc)
            for k in T.serial(steps):
                for i, j in T.Parallel(bm, bk):
                    if bx * bm + i < rows:
                        if k * bk + j < d:
                            acc[i, j] += X[bx * bm + i, k * bk + j]
            T.reduce_sum(acc, mean, dim=1)
            for i in T.Parallel(bm):
                mean[i] = mean[i] / d
            T.clear(acc)
            for k in T.serial(steps):
                for i, j in T.Parallel(bm, bk):
                    if bx * bm + i < rows:
                        if k * bk + j < d:
                            x = X[bx * bm + i, k * bk + j] - mean[i]
                            acc[i, j] += x * x
            T.reduce_sum(acc, rstd, dim=1)
            for i in T.Parallel(bm):
                rstd[i] = T.rsqrt(rstd[i] / d + eps)
            for k in T.serial(steps):
                for i, j in T.Parallel(bm, bk):
                    if bx * bm + i < rows:
                        if k * bk + j < d:
                            Y[bx * bm + i, k * bk + j] = (
                                (X[bx * bm + i, k * bk + j] - mean[i]) * rstd[i] * W[k * bk + j]
                                + Bi[k * bk + j])

    return main


def _tile(d, block):
    """(rows per program, columns per step): rows shorter than ``block`` share a program."""
    bk = min(block, 1 << max(0, (d - 1).bit_length()))
    return max(1, block // bk), bk


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.bias = nn.Parameter(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1]
        x2 = x.contiguous().view(-1, d)
        bm, bk = _tile(d, SCHEDULE["block"])
        kernel = layernorm_kernel(x2.shape[0], d, self.eps, bm, bk, SCHEDULE["threads"])
        return kernel(x2, self.weight.detach().contiguous(),
                      self.bias.detach().contiguous()).view(x.shape)
