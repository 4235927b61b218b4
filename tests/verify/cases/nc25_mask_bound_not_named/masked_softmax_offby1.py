# EXPECT: incorrect (off-by-one mask: keeps column j == lengths[b] too, i.e. `<=` instead of `<`).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, lengths):
        cols = torch.arange(x.shape[-1], device=x.device)
        keep = cols[None, :] <= lengths[:, None]          # BUG: off by one
        xm = x.masked_fill(~keep, float("-inf"))
        return torch.softmax(xm, dim=-1)
