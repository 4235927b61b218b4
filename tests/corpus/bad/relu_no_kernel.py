# corpus: task=relu backend=triton-interp expect=rejected check=no_torch_compute
# A 'Triton' candidate that never launches a kernel.
import torch
import torch.nn as nn
import triton
import triton.language as tl

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return x * (x > 0)
