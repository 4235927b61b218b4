import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Honest: the transposed convolution over blocks of 32 input channels, each block's float32
    result added to a float32 running total (a split-K order), then the bias."""

    def __init__(self, c_in, c_out, ks):
        super().__init__()
        self.conv = nn.ConvTranspose2d(c_in, c_out, ks)

    def forward(self, x):
        w = self.conv.weight
        y = None
        for lo in range(0, x.shape[1], 32):
            part = F.conv_transpose2d(x[:, lo:lo + 32], w[lo:lo + 32])
            y = part if y is None else y + part
        return y + self.conv.bias[None, :, None, None]
