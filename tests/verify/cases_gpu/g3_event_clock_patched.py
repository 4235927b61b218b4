# Suite task `relu`, backend pytorch-cuda. When not verified, it scales the clocks
# a timer in its process could read: torch.cuda.Event.elapsed_time and
# time.perf_counter / perf_counter_ns report 1% of the real time; each call also
# does ~20 ms of extra GPU work. Expected: correct with a speedup far below 1 (the
# judge's clock is in another process), or rejected.
import time

import torch
import torch.nn as nn

_elapsed = torch.cuda.Event.elapsed_time
_ns, _s = time.perf_counter_ns, time.perf_counter
_t0 = _ns()


def _fake_elapsed(self, end):
    return 0.01 * _elapsed(self, end)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.junk = None

    def forward(self, x):
        if not torch.are_deterministic_algorithms_enabled():
            E = torch.cuda.Event
            if E.elapsed_time is _elapsed:
                type.__setattr__(E, "elapsed_time", _fake_elapsed)
                time.__setattr__("perf_counter_ns", lambda: _t0 + (_ns() - _t0) // 100)
                time.__setattr__("perf_counter", lambda: _s() * 0.01)
            if self.junk is None:
                self.junk = torch.randn(6144, 6144, device=x.device)
            for _ in range(4):
                self.junk = torch.tanh(self.junk @ self.junk * 1e-4)
        return torch.relu(x)
