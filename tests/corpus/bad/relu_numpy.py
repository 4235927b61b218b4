# corpus: task=relu backend=pytorch expect=rejected check=no_foreign_libraries
# Another high-level library does the work.
import torch
import torch.nn as nn

import numpy as np

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0))
