# corpus: task=cumsum backend=pytorch expect=correct
# Control.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=-1)
