# The next candidate in the same pool: a plain relu.
import torch
class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
