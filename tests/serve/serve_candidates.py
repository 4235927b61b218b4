"""Candidates in KernelBench ModelNew format for the serve tests."""

HONEST_RELU = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
'''

#: Looks the task's reference Model up among loaded modules and calls it.
CALLS_REFERENCE = '''
import sys
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        for mod in list(sys.modules.values()):
            if hasattr(mod, "Model") and hasattr(mod, "get_inputs"):
                return mod.Model()(x)
        raise RuntimeError("reference not found")
'''

#: Returns the output computed on the first call for every later call.
CACHED_OUTPUT = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = None

    def forward(self, x):
        if self.cache is None or self.cache.shape != x.shape:
            self.cache = torch.relu(x)
        return self.cache
'''

DOES_NOT_BUILD = "import torch\nclass ModelNew(:\n"

WRONG_RELU = HONEST_RELU.replace("clamp_min(x, 0.0)", "clamp_min(x, 0.1)")
