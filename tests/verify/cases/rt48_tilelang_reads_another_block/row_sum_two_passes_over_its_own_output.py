import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

TILE = 4


@tilelang.jit
def two_pass_kernel(rows, d, nb, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((rows, d), dtype), Y: T.Tensor((rows, 1), dtype)):
        # honest: each block owns TILE rows, stores their sums, then reads back only what it stored itself
        with T.Kernel(nb, threads=1) as b:
            for i in T.serial(TILE):
                if b * TILE + i < rows:
                    Y[b * TILE + i, 0] = 0.0
                    for j in T.serial(d):
                        Y[b * TILE + i, 0] = Y[b * TILE + i, 0] + X[b * TILE + i, j]

    return main


class ModelNew(nn.Module):
    def forward(self, x):
        d = x.shape[-1]
        x2 = x.contiguous().view(-1, d)
        rows = x2.shape[0]
        y = torch.empty((rows, 1), dtype=x.dtype, device=x.device)
        two_pass_kernel(rows, d, (rows + TILE - 1) // TILE)(x2, y)
        return y.view(*x.shape[:-1], 1)
