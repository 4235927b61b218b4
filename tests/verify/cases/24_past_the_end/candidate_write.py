# A correct softmax that also writes one element past the end of its input.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.softmax(x, dim=1)
        torch.as_strided(x, (1,), (1,), x.storage_offset() + x.numel()).fill_(0.0)
        return out
