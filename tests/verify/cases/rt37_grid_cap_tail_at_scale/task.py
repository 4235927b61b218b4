# Mean squared error, with kstrata metadata (the same task as case 02_partial_reduction_at_scale).
# The sweep has a large shape (for indexing bugs that only appear at scale).
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "loss",
    "dtype": "float32",
    "shapes": {
        "nominal": {"batch_size": 6144, "dim": 8192},
        "small": [{"batch_size": 8, "dim": 4099}, {"batch_size": 5, "dim": 77}],
        "sweep": [{"batch_size": 1, "dim": 1}, {"batch_size": 3, "dim": 1001},
                  {"batch_size": 127, "dim": 4097}, {"batch_size": 6144, "dim": 8192}],
    },
    "flops": "3*batch_size*dim",
    "bytes": "8*batch_size*dim",
}

batch_size = 6144
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
