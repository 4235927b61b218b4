import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, scale):
        return (x / scale).clamp(-128, 127).to(torch.int8)  # truncates toward zero
