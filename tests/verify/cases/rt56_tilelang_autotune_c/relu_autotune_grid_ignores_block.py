import tilelang
import tilelang.language as T
import torch
import torch.nn as nn


@tilelang.autotune(configs=[{"block": 256, "threads": 1}, {"block": 64, "threads": 1}])
@tilelang.jit(out_idx=[-1])
def relu_kernel(n, block=256, threads=1, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        # the grid ignores the config's block: right for block=256 only (block=64 leaves 3/4 of Y unwritten)
        with T.Kernel(T.ceildiv(n, 256), threads=threads) as bx:
            for i in T.serial(block):
                if bx * block + i < n:
                    Y[bx * block + i] = T.max(X[bx * block + i], T.cast(0, dtype))

    return main


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.contiguous().view(-1)
        return relu_kernel(flat.numel())(flat).view(x.shape)
