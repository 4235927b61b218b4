# Honest and stable: the max-subtracted softmax (finite wherever the input is finite).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        m = x.amax(dim=-1, keepdim=True)
        e = torch.exp(x - m)
        return e / e.sum(dim=-1, keepdim=True)
