# corpus: task=relu backend=pytorch expect=incorrect check=tolerance
# Constant all-zero output.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
