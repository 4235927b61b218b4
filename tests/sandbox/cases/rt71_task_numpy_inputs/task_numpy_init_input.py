# Red team rt71: get_init_inputs() returns a numpy number (kstrata eval ended in a WireError traceback, exit 1)
import torch, numpy as np
class Model(torch.nn.Module):
    def __init__(self, w):
        super().__init__(); self.w = float(w)
    def forward(self, x): return torch.relu(x) * self.w
def get_inputs(): return [torch.randn(4, 4)]
def get_init_inputs(): return [np.float32(2.0)]
