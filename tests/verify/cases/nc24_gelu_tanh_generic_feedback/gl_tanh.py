import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        # BUG: tanh approximation instead of the exact erf GELU
        return F.gelu(self.linear(x), approximate="tanh")
