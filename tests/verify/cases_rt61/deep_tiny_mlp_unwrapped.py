# The same layers, called without the module wrappers: addmm and an in-place relu per layer.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        for m in self.body:
            if isinstance(m, nn.Linear):
                x = torch.addmm(m.bias, x, m.weight.t())
            else:
                x = x.relu_()
        return x
