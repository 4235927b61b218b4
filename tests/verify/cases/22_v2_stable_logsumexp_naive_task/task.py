# A textbook logsumexp, log(sum(exp(x))) over the last dim, fp32, category reduction.
# On the offset/far draws exp overflows in the fp32 reference and in the float64 oracle
# alike: both give +inf from finite inputs.
import torch
import torch.nn as nn

KSTRATA = {"level": 1, "category": "reduction", "dtype": "float32",
           "shapes": {"nominal": {"rows": 64, "cols": 512},
                      "small": [{"rows": 4, "cols": 100}],
                      "sweep": [{"rows": 3, "cols": 513}, {"rows": 64, "cols": 512}]}}

rows = 64
cols = 512


class Model(nn.Module):
    def forward(self, x):
        return torch.log(torch.exp(x).sum(dim=-1))


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
