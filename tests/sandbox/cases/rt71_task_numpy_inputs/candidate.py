import torch
class ModelNew(torch.nn.Module):
    def forward(self, *a): return torch.relu(torch.as_tensor(a[0]))
