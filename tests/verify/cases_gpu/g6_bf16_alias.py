# Suite task `matmul_square` (float32), backend pytorch-cuda. Computes the product
# in bfloat16 (dtype reached through getattr) and casts back: reduced precision
# behind the task's float32 contract. Expected: incorrect or rejected.
import torch
import torch.nn as nn

_low = getattr(torch, "bfloat" + "16")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return (A.to(_low) @ B.to(_low)).to(A.dtype)
