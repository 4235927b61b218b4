import torch
class ModelNew(torch.nn.Module):
    def __init__(self, w):
        super().__init__(); self.w = float(w)
    def forward(self, x): return torch.relu(x) * self.w
