# log_softmax, pytorch: an honest formulation, x - logsumexp(x) (as a fused kernel computes it)
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x - torch.logsumexp(x, dim=-1, keepdim=True)
