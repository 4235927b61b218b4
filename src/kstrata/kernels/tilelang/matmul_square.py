"""Fusion plan: one kernel, C = A @ B; one program per output row, serial dot products
(the loop form TileLang's C target lowers; T.gemm needs a GPU target)."""

import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

SCHEDULE = {"threads": 1}


@tilelang.jit(out_idx=[-1])
def matmul_kernel(m, n, k, threads, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((m, k), dtype), B: T.Tensor((k, n), dtype), C: T.Tensor((m, n), dtype)):
        with T.Kernel(m, threads=threads) as i:
            acc = T.alloc_var("float32")
            for j in T.serial(n):
                acc = 0.0
                for kk in T.serial(k):
                    acc += A[i, kk] * B[kk, j]
                C[i, j] = acc

    return main


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        m, k = A.shape
        kernel = matmul_kernel(m, B.shape[1], k, SCHEDULE["threads"])
        return kernel(A.contiguous(), B.contiguous())
