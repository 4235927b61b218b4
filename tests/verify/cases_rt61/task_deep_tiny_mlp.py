# KernelBench-format task without kstrata metadata: a deep stack of small Linear+ReLU layers on a batch
# of 8 (about 1 MFLOP a call, a few microseconds of compute per layer; each module call costs more than that).
import torch
import torch.nn as nn

batch_size = 8
width = 64
depth = 16


class Model(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


def get_inputs():
    return [torch.randn(batch_size, width)]


def get_init_inputs():
    return [width, depth]
