"""SwiGLU whose ModelNew is a plain class (no torch.nn.Module): right for a freshly built one, but
`kstrata export`'s KernelModule.from_model(model) calls its load_state_dict, which it does not have."""

import torch
import torch.nn.functional as F


class ModelNew:
    def __init__(self, dim: int, hidden: int):
        self.w1 = torch.nn.Linear(dim, hidden, bias=False)
        self.w3 = torch.nn.Linear(dim, hidden, bias=False)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return F.silu(self.w1(x)) * self.w3(x)
