# corpus: task=tasks/w8a8_gemm.py backend=pytorch expect=correct
# Control.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(args[1], args[0]))

    def forward(self, x):
        sx = x.abs().amax(-1, keepdim=True).clamp_min(1e-8) / 127
        sw = self.weight.abs().amax(-1, keepdim=True).clamp_min(1e-8) / 127
        xq = torch.round(x / sx).clamp(-127, 127)
        wq = torch.round(self.weight / sw).clamp(-127, 127)
        return (xq @ wq.T) * sx * sw.T
