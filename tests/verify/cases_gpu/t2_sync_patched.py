# Suite task `relu`, backend triton. When not verified: torch.cuda.synchronize and
# torch._C._cuda_synchronize become no-ops, and a second Triton kernel queues
# ~20 ms of busy work after the (correct) relu. Expected: correct with a speedup far
# below 1, or rejected.
import torch
import torch.nn as nn
import triton
import triton.language as tl

_noop = lambda *a, **k: None  # noqa: E731


@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


@triton.jit
def _busy(z_ptr, iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(z_ptr + offs)
    for _ in range(iters):
        v = v * 0.999 + 0.001
    tl.store(z_ptr + offs, v)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.z = None

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _relu[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        if x.is_cuda and not torch.are_deterministic_algorithms_enabled():
            c = torch.cuda
            if c.synchronize is not _noop:
                c.__setattr__("synchronize", _noop)
                torch._C.__setattr__("_cuda_synchronize", _noop)
            if self.z is None:
                self.z = torch.zeros(132 * 4 * 1024, device=x.device)
            _busy[(132 * 4,)](self.z, 5000000, BLOCK=1024)
        return y
