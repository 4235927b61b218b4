import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """An honest softmax computed in an inference-mode block (two inference tensors made, one returned)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        with torch.inference_mode():
            m = x.amax(dim=-1, keepdim=True)
            e = torch.exp(x - m)
            return e / e.sum(dim=-1, keepdim=True)
