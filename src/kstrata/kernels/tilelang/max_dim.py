"""Fusion plan: one kernel, one program per row: y = max(x) over the last axis."""

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
            top = -T.infinity("float32")
            for j in T.serial(d):
                top = T.max(top, X[r, j])
            Y[r] = top

    return main


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1]
        x2 = x.contiguous().view(-1, d)
        y = row_kernel(x2.shape[0], d, SCHEDULE["threads"])(x2)
        return y.view(x.shape[:-1])
