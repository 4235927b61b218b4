import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

CHUNK = 64


@tilelang.jit
def row_kernel(rows, d, nc, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((rows, d), dtype), Y: T.Tensor((rows, 1), dtype)):
        # honest: the load is under the bounds test
        with T.Kernel(rows, threads=1) as r:
            acc = T.alloc_var("float32")
            v = T.alloc_var("float32")
            acc = 0.0
            for c in T.serial(nc):
                for j in T.serial(CHUNK):
                    if c * CHUNK + j < d:
                        v = X[r, c * CHUNK + j]
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
