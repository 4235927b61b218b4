# The same grid-limit bug as case 02: one launch of at most BLOCKS blocks of 768 elements each, and
# no grid-stride loop. The real CUDA grid.y cap is 65535 blocks (50,330,880 elements); the cap here is
# scaled down with the task's large shape (768 x 8192 instead of 6144 x 8192) so that the same 768
# elements are skipped: every shape up to 6,290,688 elements is covered exactly; at the 768 x 8192
# sweep/nominal shape the last 768 elements (0.012%) are never read. The mean of the covered part
# differs from the true mean by ~2e-7..5e-6 relative on normal inputs: under the fp32 rtol (1e-4).
import torch
import torch.nn as nn

BLOCKS = 8191
BLOCK = 768


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        covered = min(predictions.numel(), BLOCKS * BLOCK)
        d = predictions.reshape(-1)[:covered] - targets.reshape(-1)[:covered]
        return (d * d).mean()
