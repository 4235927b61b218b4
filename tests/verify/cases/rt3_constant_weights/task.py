import torch
import torch.nn as nn

KSTRATA = {
    "level": 1, "category": "matmul", "dtype": "float32",
    "shapes": {"nominal": {"B": 64, "K": 256, "N": 128}, "small": [{"B": 5, "K": 77, "N": 33}],
               "sweep": [{"B": 1, "K": 3, "N": 2}, {"B": 33, "K": 1001, "N": 129}]},
    "flops": "2*B*K*N", "bytes": "4*(B*K+K*N+B*N)",
}
B, K, N = 64, 256, 128


class Model(nn.Module):
    """A linear layer whose weights are all 0.01 (a constant initialisation)."""

    def __init__(self, k, n):
        super().__init__()
        self.fc = nn.Linear(k, n)
        nn.init.constant_(self.fc.weight, 0.01)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(B, K)]


def get_init_inputs():
    return [K, N]
