"""SwiGLU whose stacked W1|W3 is a non-persistent buffer built in __init__ and rebuilt by a
load_state_dict post-hook: right after load_state_dict."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.register_buffer("w13_t", self._stacked(), persistent=False)
        self.register_load_state_dict_post_hook(lambda module, keys: module._restack())

    def _stacked(self) -> torch.Tensor:
        return torch.cat([self.w1.weight, self.w3.weight], dim=0).t().detach().contiguous()

    def _restack(self) -> None:
        self.w13_t = self._stacked()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.w1.weight.shape[0]
        y = torch.mm(x, self.w13_t)
        return F.silu(y[:, :h]) * y[:, h:]
