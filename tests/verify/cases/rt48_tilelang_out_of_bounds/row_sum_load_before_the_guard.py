import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

CHUNK = 64


@tilelang.jit
def row_kernel(rows, d, nc, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((rows, d), dtype), Y: T.Tensor((rows, 1), dtype)):
        # one block per row; each element is loaded before the bounds test and dropped after it, so the values
        # are right, but the last chunk's loads run past the row (past the end of X in the last row)
        with T.Kernel(rows, threads=1) as r:
            acc = T.alloc_var("float32")
            v = T.alloc_var("float32")
            acc = 0.0
            for c in T.serial(nc):
                for j in T.serial(CHUNK):
                    v = X[r, c * CHUNK + j]
                    if c * CHUNK + j < d:
                        acc += v
            Y[r, 0] = acc

    return main


class ModelNew(nn.Module):
    def forward(self, x):
        d = x.shape[-1]
        x2 = x.contiguous().view(-1, d)
        y = torch.empty((x2.shape[0], 1), dtype=x.dtype, device=x.device)
        row_kernel(x2.shape[0], d, (d + CHUNK - 1) // CHUNK)(x2, y)
        return y.view(*x.shape[:-1], 1)
