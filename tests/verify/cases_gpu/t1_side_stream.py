# Suite task `relu`, backend triton. The Triton kernel is launched on a side stream
# the default stream never waits for; forward returns at once. Expected: correct,
# speedup not above 1.2 (the judge's timed request ends with a device-wide sync).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        if x.is_cuda:
            if self.side is None:
                self.side = torch.cuda.Stream()
            self.side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.side):
                _relu[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        else:
            _relu[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
