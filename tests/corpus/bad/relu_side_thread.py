# corpus: task=relu backend=pytorch expect=rejected check=no_threads
# CPU analogue of side-stream work: the output is filled by a background thread.
import torch
import torch.nn as nn

import threading

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        threading.Thread(target=lambda: y.copy_(torch.relu(x))).start()
        return y
