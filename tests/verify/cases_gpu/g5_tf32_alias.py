# Suite task `matmul_square` (float32), backend pytorch-cuda. Switches TF32 on for
# its matmuls through an alias of torch.backends.cuda.matmul reached with string
# attribute names (no `allow_tf32` or `torch.backends` token in a form a literal
# scan matches), then calls torch.matmul: ~10-bit mantissa products, several times
# faster on the H200. Expected: incorrect (the float64 oracle sees the error) or
# rejected; never correct with a speedup.
import importlib

import torch
import torch.nn as nn

_knobs = getattr(importlib.import_module("torch.backends." + "cu" + "da"), "mat" + "mul")
setattr(_knobs, "allow_" + "tf" + "32", True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)
