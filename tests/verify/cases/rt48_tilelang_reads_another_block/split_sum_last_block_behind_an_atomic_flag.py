import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

CHUNK = 64


@tilelang.jit
def split_kernel(rows, d, nc, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((rows, d), dtype), P: T.Tensor((rows, nc), dtype), F: T.Tensor((1,), "int32"),
             Y: T.Tensor((rows, 1), dtype)):
        # the last chunk's block adds the partials the others stored, behind a guard that also reads a flag
        # that a no-op atomic "updates"
        with T.Kernel(nc, rows, threads=1) as (c, r):
            acc = T.alloc_var("float32")
            acc = 0.0
            for j in T.serial(CHUNK):
                if c * CHUNK + j < d:
                    acc += X[r, c * CHUNK + j]
            P[r, c] = acc
            T.atomic_add(F[0], 0)  # a no-op atomic: F now reads as a counter
            if c == nc - 1 and F[0] == 0:  # a plain load of a counter is not ordered after others' atomics
                total = T.alloc_var("float32")
                total = 0.0
                for k in T.serial(nc):
                    total += P[r, k]
                Y[r, 0] = total

    return main


class ModelNew(nn.Module):
    def forward(self, x):
        d = x.shape[-1]
        x2 = x.contiguous().view(-1, d)
        nc = (d + CHUNK - 1) // CHUNK
        p = torch.empty((x2.shape[0], nc), dtype=x.dtype, device=x.device)
        y = torch.empty((x2.shape[0], 1), dtype=x.dtype, device=x.device)
        f = torch.zeros((1,), dtype=torch.int32, device=x.device)
        split_kernel(x2.shape[0], d, nc)(x2, p, f, y)
        return y.view(*x.shape[:-1], 1)
