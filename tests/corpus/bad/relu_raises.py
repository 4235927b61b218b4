# corpus: task=relu backend=pytorch expect=runtime_error check=run
# Raises at run time.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return x.view(3, -1, 7, 11)
