# corpus: task=relu backend=pytorch expect=rejected check=no_subprocess
# Shells out.
import torch
import torch.nn as nn

import subprocess

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        subprocess.run(['true'])
        return torch.relu(x)
