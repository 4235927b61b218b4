# The control: a TileLang relu kernel (compiled at its first launch for each size, inside the call).
import tilelang
import tilelang.language as T
import torch
import torch.nn as nn


@tilelang.jit(out_idx=[-1])
def relu_kernel(n, block, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, block), threads=1) as bx:
            for i in T.serial(block):
                if bx * block + i < n:
                    Y[bx * block + i] = T.max(X[bx * block + i], T.cast(0, dtype))

    return main


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        flat = x.contiguous().view(-1)
        return relu_kernel(flat.numel(), 256)(flat).view(x.shape)
