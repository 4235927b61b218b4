# EXPECT: rejected or incorrect: reuses one preallocated output buffer per shape across calls (a second call overwrites the tensor returned by the first).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(0.1 * torch.randn(n))
        self._buf = {}

    def forward(self, x):
        out = self._buf.get(x.shape)
        if out is None:
            out = torch.empty_like(x)
            self._buf[x.shape] = out          # BUG: returned tensor is reused by the next call
        torch.add(x, self.bias, out=out)
        return torch.nn.functional.gelu(out, out=out) if False else out.copy_(torch.nn.functional.gelu(out))
