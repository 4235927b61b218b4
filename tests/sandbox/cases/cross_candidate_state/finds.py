"""A correct softmax that refuses to load when it finds anything an earlier
candidate left (the error message names what it found)."""

import torch
import torch.nn as nn

# past the static checks (as preset "warn" lets through): the sandbox must hold by itself
_imp = __builtins__["__import__"] if isinstance(__builtins__, dict) else getattr(__builtins__, "__import__")
os, ctypes = _imp("o" + "s"), _imp("ct" + "ypes")

found = [p for p in ("/tmp/left_by_an_earlier_candidate", "/tmp/.triton/cache/planted",
                     "/tmp/kstrata_task/torch_helpers.py", "/dev/shm/left_by_an_earlier_candidate", "/tmp/locked")
         if os.path.lexists(p)]
if ctypes.CDLL(None, use_errno=True).shmget(0x4B53, 0, 0) != -1:
    found.append("System V shared memory segment 0x4B53")
if found:
    raise RuntimeError(f"PROBE left by an earlier candidate: {found}")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
