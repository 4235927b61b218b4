"""Red team rt74: forks busy processes at import that spin through the whole verification; the
candidate's own calls are honest. Between its requests the judge draws inputs and runs the
reference and the float64 oracle on the same CPUs, and nothing froze or counted the sandbox
then: with 16 of them a 'kstrata eval relu --scope small' verification (24 s alone) was still
running after 10 minutes on a 2-CPU machine, every other process of the machine slowed with it;
the candidate's time limit counts its own requests only, and the whole verification's wall limit
(3 x the limit + 300 s) would have ended it as the judge's timeout. ``N`` spinners (4 here: the
test's; 16 showed the slowdown). Past the static checks (as preset "warn" lets through)."""
import torch
import torch.nn as nn
import typing

_os = getattr(typing.sys, "mod" + "ules")["o" + "s"]
N = 4
for _ in range(N):
    if _os.fork() == 0:
        while True:
            pass


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
