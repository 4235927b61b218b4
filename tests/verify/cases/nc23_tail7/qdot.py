import torch
import torch.nn as nn

# Row-wise dot of an int8-quantized activation (per-column scale) with a float input:
#   out[b] = sum_d x[b, d] * (q[b, d] * scale[d])
KSTRATA = {
    "level": 2,
    "category": "quantization",
    "dtype": "float32",
    "shapes": {
        "nominal": {"B": 1024, "D": 2048},
        "small": [{"B": 8, "D": 256}, {"B": 5, "D": 77}],
        "sweep": [{"B": 1, "D": 4096}, {"B": 127, "D": 1001}, {"B": 64, "D": 1024}],
    },
    "flops": "3*B*D",
    "bytes": "5*B*D + 4*D + 4*B",
}

B, D = 1024, 2048


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(0.01 + 0.01 * torch.rand(dim))

    def forward(self, x, q):
        return (x * q.to(x.dtype) * self.scale).sum(-1)


def get_inputs():
    return [torch.randn(B, D), torch.randint(-127, 128, (B, D), dtype=torch.int8)]


def get_init_inputs():
    return [D]
