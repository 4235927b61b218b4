"""SwiGLU whose W1 and W3 are stacked ONCE in __init__ into a plain attribute (queue round rt82's third
answer): right for a freshly built ModelNew, stale once `kstrata export`'s KernelModule.from_model(model)
loads other weights with load_state_dict."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.hidden = hidden
        # derived once: a plain attribute, not in the state_dict, never updated
        self.w13_t = torch.cat([self.w1.weight, self.w3.weight], dim=0).t().detach().contiguous()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.mm(x, self.w13_t)
        return F.silu(y[:, :self.hidden]) * y[:, self.hidden:]
