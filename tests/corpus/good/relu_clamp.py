# corpus: task=relu backend=pytorch expect=correct
# Control.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return x.clamp(min=0)
