# corpus: task=tasks/sdpa.py backend=pytorch expect=correct
# Control.
import torch
import torch.nn as nn

import math

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, q, k, v):
        s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
        return torch.softmax(s, dim=-1) @ v
