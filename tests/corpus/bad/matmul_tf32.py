# corpus: task=matmul_square backend=pytorch expect=rejected check=no_precision_downgrade
# TF32 on an fp32 task.
import torch
import torch.nn as nn

torch.backends.cuda.matmul.allow_tf32 = True

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, a, b):
        return a @ b
