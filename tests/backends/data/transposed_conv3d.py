"""A 5-D transposed convolution, which TVM 0.27's Relax frontend cannot import (test data for
tests/backends/test_tvm_export_shapes.py and tests/backends/test_tvm_frontend_failure_is_quiet.py)."""
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.ConvTranspose3d(cin, cout, k)

    def forward(self, x):
        return self.conv(x)

batch_size = 2
cin = 3
cout = 4
k = 3
depth = 5
height = 6
width = 7

def get_inputs():
    return [torch.randn(batch_size, cin, depth, height, width)]

def get_init_inputs():
    return [cin, cout, k]
