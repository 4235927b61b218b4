"""RMSNorm over the last axis in float16: y = x / sqrt(mean(x^2) + eps) * weight
(Zhang & Sennrich 2019), computed in float32 and rounded once, as LLaMA's RMSNorm does."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1,
    "category": "norm",
    "dtype": "float16",
    "description": "RMSNorm of a (B, D) float16 activation with a float16 (D,) weight. The "
    "reference squares and sums in float32 (x^2 overflows float16 for |x| > 256, which the "
    "'large' distribution reaches).",
    "shapes": {
        "nominal": {"B": 4096, "D": 4096},
        "small": [{"B": 8, "D": 512}, {"B": 5, "D": 77}],
        "sweep": [
            {"B": 1, "D": 2},
            {"B": 3, "D": 4099},
            {"B": 127, "D": 1001},
            {"B": 17, "D": 32771},
        ],
    },
    "precision": {"allow_reduced_precision": True},
    # square, sum, rsqrt, 2 multiplies per element
    "flops": "4*B*D",
    # read x, write y, read weight (fp16)
    "bytes": "2*(2*B*D + D)",
    "tags": ["norm", "memory-bound", "half"],
}

B = 4096
D = 4096
EPS = 1e-6


class Model(nn.Module):
    def __init__(self, dim: int, eps: float = EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((1 + 0.1 * torch.randn(dim)).half())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # accumulate in float32 (float64 when the oracle upcasts everything)
        acc = torch.promote_types(x.dtype, torch.float32)
        xf = x.to(acc)
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (y * self.weight.to(acc)).to(x.dtype)


def get_inputs():
    return [torch.randn(B, D).half()]


def get_init_inputs():
    return [D]
