import torch
import torch.nn as nn

_calls = [0]


class ModelNew(nn.Module):
    def forward(self, x):
        _calls[0] += 1  # the summation order changes from call to call, as float atomics' does
        c = x - x.mean(dim=-1, keepdim=True)
        perm = torch.randperm(x.shape[-1], generator=torch.Generator().manual_seed(_calls[0]))
        return 1000.0 * c[..., perm].sum(dim=-1, keepdim=True)
