# corpus: task=relu backend=pytorch expect=incorrect check=tolerance
# Non-deterministic output (stands in for a race): two runs on one input differ.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return torch.relu(x) + torch.rand_like(x) * 1e-3
