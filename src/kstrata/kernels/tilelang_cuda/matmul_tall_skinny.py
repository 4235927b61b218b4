"""Fusion plan: one kernel, C = A @ B (A tall, B narrow) in fp32 on the CUDA cores
(T.gemm would take float32 operands as TF32, whose 10-bit mantissa misses the task's
fp64-oracle tolerance). A program computes a ``block_m x block_n`` tile of C in a
register fragment (the whole width of C at the nominal N = 64, so A is read from
memory once); ``T.Pipelined`` streams ``block_k``-deep slices of A and B through
shared memory ``num_stages`` deep (TMA or cp.async; out-of-range rows and columns
are zero-filled, which adds nothing to a dot product) and each slice is
accumulated by a ``T.Parallel`` multiply-add over the tile; stores are guarded."""

import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

SCHEDULE = {"block_m": 128, "block_n": 64, "block_k": 32, "num_stages": 3, "threads": 256}  # kstrata-tune: block_m in {32, 64, 128, 256}; block_n in {16, 32, 64, 128}; block_k in {16, 32, 64}; num_stages in {1, 2, 3, 4}; threads in {64, 128, 256, 512} on cuda


@tilelang.jit(out_idx=[-1])
def matmul_kernel(m, n, k, block_m, block_n, block_k, num_stages, threads, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((m, k), dtype), B: T.Tensor((k, n), dtype), C: T.Tensor((m, n), dtype)):
        with T.Kernel(T.ceildiv(n, block_n), T.ceildiv(m, block_m), threads=threads) as (bx, by):
            a_tile = T.alloc_shared((block_m, block_k), dtype)
            b_tile = T.alloc_shared((block_k, block_n), dtype)
            acc = T.alloc_fragment((block_m, block_n), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(k, block_k), num_stages=num_stages):
                T.copy(A[by * block_m, ko * block_k], a_tile)
                T.copy(B[ko * block_k, bx * block_n], b_tile)
                for kk in T.serial(block_k):
                    for i, j in T.Parallel(block_m, block_n):
                        acc[i, j] += a_tile[i, kk] * b_tile[kk, j]
            T.copy(acc, C[by * block_m, bx * block_n])

    return main


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        m, k = A.shape
        s = SCHEDULE
        kernel = matmul_kernel(m, B.shape[1], k, s["block_m"], s["block_n"], s["block_k"],
                               s["num_stages"], s["threads"])
        return kernel(A.contiguous(), B.contiguous())
