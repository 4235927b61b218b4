import torch
import torch.nn as nn

KSTRATA = {
    "level": 3, "category": "model", "dtype": "float32",
    "shapes": {"nominal": {"B": 16, "T": 64}, "small": [{"B": 2, "T": 7}],
               "sweep": [{"B": 1, "T": 3}, {"B": 5, "T": 33}]},
    "flops": "2*B*T*3*256*256", "bytes": "4*(3*256*256+1000*256+B*T*256)",
}
B, T = 16, 64


class Model(nn.Module):
    """Token ids -> embedding -> three Linear+ReLU layers."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 256)
        self.mlp = nn.Sequential(*[m for _ in range(3) for m in (nn.Linear(256, 256), nn.ReLU())])

    def forward(self, ids):
        return self.mlp(self.emb(ids))


def get_inputs():
    return [torch.randint(0, 1000, (B, T))]


def get_init_inputs():
    return []
