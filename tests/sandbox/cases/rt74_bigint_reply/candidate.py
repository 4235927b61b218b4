"""Red team rt74: answers the judge's ``load`` request itself, at import, before its harness does
(straight into its process's end of the pipe to the judge, as cases/forged_reply), with a parameter
summary whose mean is an integer of 401 digits. JSON reads it as a Python int; the judge's
``param_draws.validated`` asked ``math.isfinite`` of it and the verification ended in an
OverflowError traceback ('kstrata verifier failed on relu/pytorch'), a candidate's doing reported as
kstrata's bug (case 15's kind). Past the static checks (as preset "warn" lets through)."""

import torch
import torch.nn as nn

_imp = __builtins__["__import__"] if isinstance(__builtins__, dict) else getattr(__builtins__, "__import__")
os, fcntl, struct = _imp("o" + "s"), _imp("fcntl"), _imp("struct")
_ok = lambda fd: os.path.exists(f"/proc/self/fd/{fd}")  # noqa: E731


# the write end of the pipe to the judge: the one write-only descriptor of 3..9
_fd = next(fd for fd in range(3, 10) if _ok(fd) and fcntl.fcntl(fd, fcntl.F_GETFL) & 3 == 1)
_head = ('{"ok": true, "load_s": 0.0, "findings": [], "params": [{"name": "w", "kind": "parameter", '
         '"shape": [4], "mean": 1' + "0" * 400 + ', "std": 1.0, "head": [1.0]}]}').encode()
os.write(_fd, struct.pack(">Q", len(_head)) + _head)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
