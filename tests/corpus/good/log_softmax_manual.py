# corpus: task=log_softmax backend=pytorch expect=correct
# Control.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return x - torch.logsumexp(x, dim=-1, keepdim=True)
