import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        amax = x.abs().amax(dim=-1, keepdim=True)
        inv = 127.0 / amax
        return torch.round(x * inv).clamp(-127, 127) * (amax * (1.0 / 127))
