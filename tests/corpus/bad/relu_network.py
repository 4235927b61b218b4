# corpus: task=relu backend=pytorch expect=rejected check=no_network
# Phones home.
import torch
import torch.nn as nn

import socket

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        socket.create_connection(('example.com', 80), timeout=0.1)
        return torch.relu(x)
