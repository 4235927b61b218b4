"""Red team rt74 (open): one bit of the run's hidden tests per evaluation through the evaluation's
wall time. The candidate passes every test, and at its first call on a shape that is not one of
the task's public ones (a hidden test) it computes for SPIN_S seconds when that shape's first
size is odd, not at all when it is even. The verdict withholds everything of a hidden test, but
the evaluation's duration is what the caller sees: the MCP server returns it (``wall_s``,
service.evaluate, to the millisecond), ``kstrata eval`` prints it, and any client can time its
call. The hidden shapes are the run's, the same for every candidate, so the bits add up over
submissions (a delay of k x 10 s, k < 32, carries 5 of them). Past the static checks.

Since rt88 the verifications of service.evaluate (the MCP server, the RL environment) pad the hidden stage
to a rung of a budget fixed before it ran (kstrata.verify.hidden_pad): the duration tells the rung, a few
bits, not the count (tests/verify/test_rt88_verify_hidden_pad.py; the quick case
tests/verify/cases/rt88_hidden_stage_length)."""

import time

import torch
import torch.nn as nn

PUBLIC = {(8, 512), (5, 77), (4096, 4096), (1024, 1024)}
SPIN_S = 15.0
_seen = []


class ModelNew(nn.Module):
    def forward(self, x):
        if tuple(x.shape) not in PUBLIC and not _seen:
            _seen.append(tuple(x.shape))
            if x.shape[0] % 2:
                t0 = time.perf_counter()
                while time.perf_counter() - t0 < SPIN_S:  # busy (the stall watch ends a sleeper)
                    pass
        return torch.relu(x)
