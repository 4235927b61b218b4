"""Fusion plan: one kernel, one program per row: y = mean(exp(x)) over the last axis, exp and mean fused."""

import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

SCHEDULE = {"threads": 1}


@tilelang.jit(out_idx=[-1])
def row_kernel(rows, d, threads, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((rows, d), dtype), Y: T.Tensor((rows,), dtype)):
        with T.Kernel(rows, threads=threads) as r:
            acc = T.alloc_var("float32")
            top = T.alloc_var("float32")
            acc = 0.0
            for j in T.serial(d):
                acc += T.exp(X[r, j])
            Y[r] = acc / d

    return main


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1]
        x2 = x.contiguous().view(-1, d)
        y = row_kernel(x2.shape[0], d, SCHEDULE["threads"])(x2)
        return y.view(x.shape[:-1])
