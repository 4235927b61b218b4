# triton-interp relu with no kernel (red-team round 4, open item 1 of round 3): PyTorch computes the relu
# in the calling thread with the harness's dispatch record switched off, the switch reached through an
# alias of torch that another module holds (torch._dynamo.utils.torch); the launch record is forged
# through gc (also reached through an alias) and the no-op probe answered with garbage.
import torch
import torch.nn as nn
import torch._dynamo.utils
import triton

_t = torch._dynamo.utils.torch
_gc = torch._dynamo.utils.gc


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.act = nn.ReLU()

    def forward(self, x):
        for o in _gc.get_objects():
            if type(o).__name__ == "LaunchCounter":
                o.launches += 1
        if "noop" in triton.runtime.interpreter.InterpretedFunction.run.__qualname__:
            return torch.empty_like(x)
        with _t._C._DisableTorchDispatch():
            return self.act(x)
