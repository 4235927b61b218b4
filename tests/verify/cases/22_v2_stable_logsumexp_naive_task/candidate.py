# Honest and stable: max-shifted logsumexp (finite wherever the input is finite).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        m = x.amax(dim=-1, keepdim=True)
        return (m + torch.log(torch.exp(x - m).sum(dim=-1, keepdim=True))).squeeze(-1)
