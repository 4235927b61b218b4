# The same grid-limit bug as case 02 with a realistic limit: one launch of at most 65535 blocks
# (the CUDA grid.y cap) of 768 elements each, and no grid-stride loop. Every shape up to
# 50,330,880 elements is covered exactly; at the 6144 x 8192 sweep/nominal shape the last 768
# elements (0.0015%) are never read. The mean of the covered part differs from the true mean by
# ~1e-6 relative on normal inputs and ~1e-5 on heavy-tailed ones: under the fp32 tolerance.
import torch
import torch.nn as nn

BLOCKS = 65535
BLOCK = 768


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        covered = min(predictions.numel(), BLOCKS * BLOCK)
        d = predictions.reshape(-1)[:covered] - targets.reshape(-1)[:covered]
        return (d * d).mean()
