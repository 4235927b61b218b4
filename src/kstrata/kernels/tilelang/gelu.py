"""Fusion plan: one kernel, y = x * Phi(x) (exact erf form) elementwise over the flattened input."""

import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

SCHEDULE = {"block": 256, "threads": 1}  # kstrata-tune: block in {64, 128, 256, 512, 1024, 2048}


@tilelang.jit(out_idx=[-1])
def gelu_kernel(n, block, threads, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, block), threads=threads) as bx:
            for i in T.serial(block):
                if bx * block + i < n:
                    Y[bx * block + i] = 0.5 * X[bx * block + i] * (1.0 + T.erf(X[bx * block + i] * 0.7071067811865476))

    return main


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.contiguous().view(-1)
        kernel = gelu_kernel(flat.numel(), SCHEDULE["block"], SCHEDULE["threads"])
        return kernel(flat).view(x.shape)
