# corpus: task=relu backend=pytorch expect=rejected check=output_type
# Lazy tensor subclass: the output object defers work until someone looks at it.
import torch
import torch.nn as nn

class Lazy(torch.Tensor):
    pass


import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return torch.relu(x).as_subclass(Lazy)
