# Suite task `relu`, backend pytorch-cuda. When it is not being verified
# (deterministic algorithms off), it replaces torch.cuda.synchronize and
# torch._C._cuda_synchronize with no-ops, then queues ~20 ms of extra GPU work
# after the (correct) output: a timed request that synchronizes through the
# patched function answers while the work is still queued. Expected: correct with a
# speedup far below 1 (the queued work is counted), or rejected.
import torch
import torch.nn as nn

_noop = lambda *a, **k: None  # noqa: E731


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.junk = None

    def forward(self, x):
        y = torch.relu(x)
        if not torch.are_deterministic_algorithms_enabled():
            c = torch.cuda
            if c.synchronize is not _noop:
                c.__setattr__("synchronize", _noop)
                torch._C.__setattr__("_cuda_synchronize", _noop)
            if self.junk is None:
                self.junk = torch.randn(6144, 6144, device=x.device)
            for _ in range(4):
                self.junk = torch.tanh(self.junk @ self.junk * 1e-4)
        return y
