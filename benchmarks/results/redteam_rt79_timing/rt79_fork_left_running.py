# rt79 probe: a correct relu that leaves a TorchScript fork running after each call returns
import torch
import torch.nn as nn


@torch.jit.script
def _busy(x: torch.Tensor, n: int) -> int:
    s = torch.zeros(1)
    for _ in range(n):
        s += torch.relu(x).sum()
    return int(s.item() > 0)


@torch.jit.script
def _launch(x: torch.Tensor, n: int) -> torch.jit.Future[int]:
    return torch.jit.fork(_busy, x, n)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.relu(x)
        _launch(x.clone(), 20)
        return out
