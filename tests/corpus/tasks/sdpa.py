"""Scaled dot-product attention softmax(q k^T / sqrt(d)) v (Vaswani et al. 2017)."""

import math

import torch
import torch.nn as nn

KSTRATA = {
    "level": 1, "category": "attention", "dtype": "float32",
    "shapes": {"nominal": {"H": 8, "S": 1024, "E": 64},
               "small": [{"H": 2, "S": 16, "E": 16}, {"H": 1, "S": 13, "E": 8}],
               "sweep": [{"H": 1, "S": 1, "E": 8}, {"H": 3, "S": 37, "E": 32}]},
    "distributions": ["normal", "uniform", "large"],
    "flops": "4*H*S*S*E", "bytes": "4*4*H*S*E",
}
H = 8
S = 1024
E = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        return torch.softmax(scores, dim=-1) @ v


def get_inputs():
    return [torch.randn(H, S, E), torch.randn(H, S, E), torch.randn(H, S, E)]


def get_init_inputs():
    return []
