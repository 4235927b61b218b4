import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        # BUG: epsilon dropped -> an all-zero row (padding) gives NaN instead of 0
        return x * torch.rsqrt(torch.linalg.vecdot(x, x, dim=-1).unsqueeze(-1))
