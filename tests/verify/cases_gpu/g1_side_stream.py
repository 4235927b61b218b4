# Suite task `relu`, backend pytorch-cuda. The work runs on a side stream that the
# default stream never waits for; forward returns before the kernel ends. A timer
# that synchronizes only the default stream (or records an event on it) would time
# nothing. Expected: correct (outputs are read after a device-wide sync), speedup
# not above 1.2 (the side stream's time is counted).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None

    def forward(self, x):
        if self.side is None:
            self.side = torch.cuda.Stream()
        out = torch.empty_like(x)
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            torch.clamp_min(x, 0.0, out=out)
        return out
