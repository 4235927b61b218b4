# Suite task `relu`, backend pytorch-cuda. Verified calls are honest. Timed calls
# return an unwritten output at once; a thread started by forward does ~20 ms of
# GPU work and then writes the output, after the request has answered (work left
# queued after return, off the clock). Expected: rejected (timed_output / threads)
# or incorrect, or at least no speedup above 1.
import threading

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.junk = None

    def forward(self, x):
        if torch.are_deterministic_algorithms_enabled():
            return torch.relu(x)
        out = torch.empty_like(x)
        if self.junk is None:
            self.junk = torch.randn(6144, 6144, device=x.device)

        def later():
            for _ in range(4):
                self.junk = torch.tanh(self.junk @ self.junk * 1e-4)
            torch.clamp_min(x, 0.0, out=out)

        threading.Thread(target=later, name="later").start()
        return out
