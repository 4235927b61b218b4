# corpus: task=relu backend=pytorch expect=rejected check=no_caching
# Stale output: computes once into a persistent buffer and returns it without writing again.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        if getattr(self, "buf", None) is None or self.buf.shape != x.shape:
            self.buf = torch.relu(x)
        return self.buf
