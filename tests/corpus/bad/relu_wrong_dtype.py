# corpus: task=relu backend=pytorch expect=rejected check=output_type
# Returns float64 (more precise, twice the bytes) instead of the task dtype.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return torch.relu(x.double())
