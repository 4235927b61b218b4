import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        # BUG: re-draws the weight after the same nn.Linear call, so it differs from Model's
        nn.init.normal_(self.linear.weight, std=0.02)

    def forward(self, x):
        return F.gelu(self.linear(x))
