"""Fusion plan: one kernel, ``rpb`` rows per program: y = x - max - log(sum(exp(x - max))) over the last axis."""

import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

SCHEDULE = {"rpb": 1, "threads": 1}  # kstrata-tune: rpb in {1, 2, 4, 8}


@tilelang.jit(out_idx=[-1])
def row_kernel(rows, d, rpb, threads, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((rows, d), dtype), Y: T.Tensor((rows, d), dtype)):
        with T.Kernel(T.ceildiv(rows, rpb), threads=threads) as b:
            acc = T.alloc_var("float32")
            top = T.alloc_var("float32")
            for i in T.serial(rpb):
                if b * rpb + i < rows:
                    top = -T.infinity("float32")
                    for j in T.serial(d):
                        top = T.max(top, X[b * rpb + i, j])
                    acc = 0.0
                    for j in T.serial(d):
                        acc += T.exp(X[b * rpb + i, j] - top)
                    for j in T.serial(d):
                        Y[b * rpb + i, j] = X[b * rpb + i, j] - top - T.log(acc)

    return main


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1]
        x2 = x.contiguous().view(-1, d)
        y = row_kernel(x2.shape[0], d, SCHEDULE["rpb"], SCHEDULE["threads"])(x2)
        return y.view(x.shape)
