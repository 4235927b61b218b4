# Suite task `relu`, backend pytorch-cuda. Each call leaves a side stream current
# (torch.cuda.set_stream) after doing its work on the stream it was called on. The
# judge times a CUDA-graph replay between two events recorded on its own stream;
# the replay (and the spin before it) go to the current stream, so before the fix
# they ran on the side stream, outside the events, and the call read as the gap
# between two back-to-back events. Expected: correct, speedup not above 1.2 (the
# harness makes its events' stream current before each replay).
import torch
import torch.nn as nn

_SIDE: list = []  # the stream left current, made at the first call (CUDA starts in the call, not at import)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        if not torch.cuda.is_current_stream_capturing():  # the graph is captured from a call that switches nothing
            _SIDE[:] = _SIDE or [torch.cuda.Stream()]
            torch.cuda.set_stream(_SIDE[0])
        return y
