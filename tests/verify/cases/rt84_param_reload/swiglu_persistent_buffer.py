"""SwiGLU whose stacked W1|W3 is registered as a PERSISTENT buffer: its key is in ModelNew's state_dict
and not in Model's, so `kstrata export`'s KernelModule.from_model(model) (a strict load_state_dict)
raises "Missing key(s) in state_dict"."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.register_buffer("w13_t", torch.cat([self.w1.weight, self.w3.weight], dim=0).t().detach().contiguous())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.w1.weight.shape[0]
        y = torch.mm(x, self.w13_t)
        return F.silu(y[:, :h]) * y[:, h:]
