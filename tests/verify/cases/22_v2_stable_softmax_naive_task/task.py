# A textbook softmax written without the max subtraction: exp(x) / sum(exp(x)).
# exp overflows for x > 88 in fp32 (the reference then gives NaN), for x > 709 in the
# float64 oracle too.
import torch
import torch.nn as nn

KSTRATA = {"level": 1, "category": "softmax", "dtype": "float32",
           "shapes": {"nominal": {"rows": 64, "cols": 512},
                      "small": [{"rows": 4, "cols": 100}],
                      "sweep": [{"rows": 3, "cols": 513}, {"rows": 64, "cols": 512}]}}

rows = 64
cols = 512


class Model(nn.Module):
    def forward(self, x):
        e = torch.exp(x)
        return e / e.sum(dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
