# corpus: task=relu backend=pytorch expect=timeout check=wall_clock timeout=8
# Hangs forever.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        while True:
            pass
