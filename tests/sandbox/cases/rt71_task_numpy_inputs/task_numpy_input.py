# Red team rt71: get_inputs() returns a numpy array (kstrata eval ended in a WireError traceback, exit 1)
import torch, numpy as np
class Model(torch.nn.Module):
    def forward(self, x): return torch.relu(torch.as_tensor(x))
def get_inputs(): return [np.ones((4, 4), dtype=np.float32)]
def get_init_inputs(): return []
