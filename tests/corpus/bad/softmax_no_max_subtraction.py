# corpus: task=softmax backend=pytorch expect=incorrect check=tolerance
# Unstable softmax: exp overflows for large inputs (NaN/Inf where the oracle is finite).
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        e = torch.exp(x)
        return e / e.sum(dim=-1, keepdim=True)
