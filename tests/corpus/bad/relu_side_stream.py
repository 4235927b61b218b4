# corpus: task=relu backend=pytorch expect=rejected check=no_side_streams
# Side-stream work: computes on a private CUDA stream so a timer on the default stream sees nothing.
import torch
import torch.nn as nn

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        if torch.cuda.is_available():
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                return torch.relu(x)
        return torch.relu(x)
