"""Red team rt77 sketch: a helper thread that works only right after the sandbox is continued (the judge
thaws it before its idle-CPU check, then starts its clock) and right after a reply (before the judge's idle
mark), i.e. in the windows 7f66959 took off the clock. Here it only burns CPU there; a real one would
compute the next call's output (the timed calls' inputs repeat). Past the static checks as preset "warn"."""
import threading
import time

import torch
import torch.nn as nn

state = {"busy_until": 0.0}


def _helper():
    last = time.monotonic()
    while True:
        time.sleep(0.0001)
        now = time.monotonic()
        if now - last > 0.002:  # stopped meanwhile (the baseline was timed): the judge is about to read, then time
            end = now + 0.0005
            while time.monotonic() < end:
                pass
        last = now


threading.Thread(target=_helper, daemon=True).start()


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
