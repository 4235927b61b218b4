# A linear layer whose weight is initialised to the identity and bias to zero (a common "start as
# identity" init, e.g. a residual adapter), then the layer is used as the reference.
import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "matmul",
    "dtype": "float32",
    "shapes": {"nominal": {"B": 2048, "D": 1024}, "small": [{"B": 8, "D": 64}, {"B": 5, "D": 77}],
               "sweep": [{"B": 1, "D": 3}, {"B": 127, "D": 1001}]},
    "flops": "2*B*D*D",
    "bytes": "4*(2*B*D + D*D)",
}
B, D = 2048, 1024


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        nn.init.eye_(self.lin.weight)
        nn.init.zeros_(self.lin.bias)

    def forward(self, x):
        return self.lin(x)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return [D]
