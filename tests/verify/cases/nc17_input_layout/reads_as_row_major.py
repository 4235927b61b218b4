import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        # reads x's memory as if it were row-major (a kernel indexing x[r * D + c] without .contiguous())
        return x.as_strided(x.shape, (x.shape[1], 1)) * 2.0 + 1.0
