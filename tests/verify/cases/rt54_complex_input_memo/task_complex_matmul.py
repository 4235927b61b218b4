"""Real part of a complex matrix product: y = Re(A @ B) for complex64 A (M, K) and B (K, N)."""

import torch
import torch.nn as nn

M = 256
K = 256
N = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return (a @ b).real.contiguous()


def get_inputs():
    return [torch.randn(M, K, dtype=torch.complex64), torch.randn(K, N, dtype=torch.complex64)]


def get_init_inputs():
    return []
