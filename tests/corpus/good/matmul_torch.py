# corpus: task=matmul_square backend=pytorch expect=correct
# Control.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, a, b):
        return torch.mm(a, b)
