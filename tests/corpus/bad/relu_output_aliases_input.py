# corpus: task=relu backend=pytorch expect=rejected check=no_output_alias
# In-place: returns its input buffer.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return x.clamp_(min=0)
