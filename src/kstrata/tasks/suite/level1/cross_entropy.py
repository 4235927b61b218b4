"""Per-sample cross-entropy of logits against integer class labels:
loss[b] = logsumexp_c(z[b, c]) - z[b, y[b]] (KernelBench level 1 #95, unreduced)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KSTRATA = {
    "level": 1,
    "category": "loss",
    "dtype": "float32",
    "description": "F.cross_entropy(logits, labels, reduction='none') for (B, C) float32 "
    "logits and (B,) int64 labels in [0, C). Unreduced so that a wrong row is located; "
    "distributions apply to the logits only.",
    "shapes": {
        "nominal": {"B": 4096, "C": 32000},
        "small": [{"B": 8, "C": 512}, {"B": 5, "C": 77}],
        "sweep": [
            {"B": 3, "C": 2},
            {"B": 3, "C": 4099},
            {"B": 127, "C": 1001},
            {"B": 17, "C": 50257},
        ],
    },
    "dist_inputs": [0],
    # max, subtract, exp, sum per logit; log, gather, subtract per row
    "flops": "4*B*C + 3*B",
    # read logits (fp32) and labels (int64), write losses (fp32)
    "bytes": "4*B*C + 8*B + 4*B",
    "tags": ["loss", "softmax", "memory-bound"],
}

B = 4096
C = 32000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, labels, reduction="none")


def get_inputs():
    return [torch.randn(B, C), torch.randint(0, C, (B,))]


def get_init_inputs():
    return []
