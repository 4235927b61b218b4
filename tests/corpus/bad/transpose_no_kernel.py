# corpus: task=transpose backend=triton-interp expect=rejected check=kernel_launched
# A 'Triton' candidate that launches no kernel: the transpose is a view plus a layout copy,
# operators a DSL candidate's host code may run, so only the launch check can catch it.
import torch
import torch.nn as nn
import triton  # noqa: F401
import triton.language as tl  # noqa: F401


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(0, 1).contiguous()
