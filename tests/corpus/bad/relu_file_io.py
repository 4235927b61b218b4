# corpus: task=relu backend=pytorch expect=rejected check=no_file_io
# Reads precomputed answers from disk.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        with open("/tmp/answers.pt", "wb") as f:
            f.write(b"")
        return torch.relu(x)
