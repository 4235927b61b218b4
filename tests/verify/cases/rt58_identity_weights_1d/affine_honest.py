import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))
        self.b = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return torch.addcmul(self.b, x, self.w)
