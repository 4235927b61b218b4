"""Scaled dot-product attention, causal in bfloat16 (float32 accumulation):
O = softmax(Q K^T / sqrt(D) [+ mask]) V
(Vaswani et al. 2017; computed without materialising the scores by FlashAttention,
Dao et al. 2022)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KSTRATA = {
    "level": 2,
    "category": "attention",
    "dtype": "bfloat16",
    "description": "Multi-head attention core with a causal mask (query i attends to keys j <= i); "
    "q, k, v of shape (B, H, S, D), "
    "output (B, H, S, D). 'large' is left out: with logits x10^4 the softmax is a hard "
    "argmax whose ties make the tolerance meaningless.",
    "shapes": {
        "nominal": {"B": 4, "H": 16, "S": 1024, "D": 64},
        "small": [{"B": 1, "H": 2, "S": 64, "D": 32}, {"B": 2, "H": 3, "S": 17, "D": 16}],
        "sweep": [
            {"B": 1, "H": 1, "S": 2, "D": 64},
            {"B": 2, "H": 3, "S": 127, "D": 64},
            {"B": 1, "H": 5, "S": 257, "D": 80},
            {"B": 1, "H": 2, "S": 1031, "D": 128},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "near_zero"],
    "precision": {"allow_reduced_precision": True},
    # half of the S*S scores are masked: count the (S+1)/2 kept per row
    "flops": "2*B*H*S*(S+1)*D + 3*B*H*S*(S+1)//2",
    # read q, k, v, write o (2-byte elements); the scores never reach DRAM
    "bytes": "2*4*B*H*S*D",
    "tags": ["attention", "half", "causal"],
}

B = 4
H = 16
S = 1024
D = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(B, H, S, D).to(torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return []
