# TASK: softmax over the last dim where columns j >= lengths[b] are masked out (prefix mask, lengths in [1, D]); a valid task file.
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "softmax",
    "dtype": "float32",
    "shapes": {
        "nominal": {"B": 1024, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 6, "D": 77}],
        "sweep": [{"B": 1, "D": 4096}, {"B": 33, "D": 1001}],
    },
}

B, D = 1024, 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, lengths):
        cols = torch.arange(x.shape[-1], device=x.device)
        mask = cols[None, :] < lengths[:, None]
        return torch.softmax(x.masked_fill(~mask, float("-inf")), dim=-1)


def get_inputs():
    x = torch.randn(B, D)
    lengths = torch.randint(1, D + 1, (B,))
    return [x, lengths]


def get_init_inputs():
    return []
