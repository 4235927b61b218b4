"""A relu whose helper process forks a child every half millisecond, each
spinning for 0.3 s: a child forked while the judge reads its process list
(psutil reads the whole host's ``/proc``) was on no list, was never
stopped, and ran through the baseline's timing (8 of 20 freezes). Past the
static checks (as preset "warn" lets through): the freeze must hold by itself."""

import torch
import torch.nn as nn

_imp = __builtins__["__import__"] if isinstance(__builtins__, dict) else getattr(__builtins__, "__import__")
os, sys = _imp("o" + "s"), _imp("s" + "ys")

HELPER = r'''
import os, time
while True:
    if os.fork() == 0:
        t = time.monotonic()
        while time.monotonic() - t < 0.3:
            pass
        os._exit(0)
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
    time.sleep(0.0005)
'''
os.posix_spawn(sys.executable, [sys.executable, "-S", "-c", HELPER], {})


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
