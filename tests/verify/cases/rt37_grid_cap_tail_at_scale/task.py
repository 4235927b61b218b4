# Mean squared error, with kstrata metadata (case 02_partial_reduction_at_scale's task with a large shape of
# 768 x 8192 instead of 6144 x 8192: the same bug at an eighth of the size; the 50M-element shape made this
# case's eval take 3-4 minutes on a busy 2-core machine). The sweep has a large shape (for indexing bugs that
# only appear at scale).
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "loss",
    "dtype": "float32",
    "shapes": {
        "nominal": {"batch_size": 768, "dim": 8192},
        "small": [{"batch_size": 8, "dim": 4099}, {"batch_size": 5, "dim": 77}],
        "sweep": [{"batch_size": 1, "dim": 1}, {"batch_size": 3, "dim": 1001},
                  {"batch_size": 127, "dim": 4097}, {"batch_size": 768, "dim": 8192}],
    },
    "flops": "3*batch_size*dim",
    "bytes": "8*batch_size*dim",
}

batch_size = 768
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
