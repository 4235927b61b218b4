# Case 12, bounded for a test: <count> children, each setsid()s (leaves the
# process group) and execs `sleep <seconds>` (a duration unique to the test, so
# the test finds them on the host by their command line); the forward call then
# spins, so kstrata's timeout ends the candidate.
import torch
import torch.nn as nn
_os = getattr(torch, "o" + "s")  # computed names: no_introspection, a warning at preset "warn"
_done = [False]
def _spawn():
    for i in range(<count>):
        pid = _os.fork()
        if pid == 0:
            _os.setsid()
            _os.execv("/bin/sleep", ["sleep", "<seconds>"])
class ModelNew(nn.Module):
    def forward(self, x):
        if not _done[0]:
            _done[0] = True
            _spawn()
        while True:
            pass
