# For the shipped suite task `relu`. Like rt39 (one output buffer kept and rewritten), but the module
# keeps TWO buffers and alternates: each call's output is the storage of the call before the previous
# one, which the caller no longer holds in a harness that keeps only the last call's outputs alive,
# so a returned storage never matches "the previous call's output".
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.bufs = []
        self.turn = 0

    def forward(self, x):
        if len(self.bufs) < 2 or self.bufs[0].shape != x.shape or self.bufs[0].dtype != x.dtype:
            self.bufs = [torch.empty_like(x), torch.empty_like(x)]
        self.turn ^= 1
        buf = self.bufs[self.turn]
        torch.clamp(x, min=0.0, out=buf)
        return buf
