# corpus: task=relu backend=pytorch expect=rejected check=inputs_unchanged
# Zeroes its input after computing, so a reference run afterwards would see zeros.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        y = torch.relu(x)
        x.zero_()
        return y
