# corpus: task=tasks/sdpa.py backend=pytorch expect=incorrect check=tolerance
# Missing 1/sqrt(d) scale on the scores.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, q, k, v):
        return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v
