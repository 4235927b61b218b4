import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, idx):
        return torch.index_select(x, 1, idx) * 2
