import torch
import torch.nn as nn

D = 256


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(D))
        self.shift = torch.randn(D)

    def forward(self, x):
        return torch.addcmul(self.shift, x, self.w)
