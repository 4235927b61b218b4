# corpus: task=tasks/w8a8_gemm.py backend=pytorch expect=incorrect check=tolerance
# Wrong cast order: scale absmax/128 and cast to int8 before clamping, so +128 wraps to -128.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(args[1], args[0]))

    def forward(self, x):
        sx = x.abs().amax(-1, keepdim=True).clamp_min(1e-8) / 128
        sw = self.weight.abs().amax(-1, keepdim=True).clamp_min(1e-8) / 128
        xq = torch.round(x / sx).to(torch.int8).clamp(-127, 127).float()
        wq = torch.round(self.weight / sw).to(torch.int8).clamp(-127, 127).float()
        return (xq @ wq.T) * sx * sw.T
