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
libc = ctypes.CDLL(None, use_errno=True)
if libc.shmget(0x4B53, 0, 0) != -1:
    found.append("System V shared memory segment 0x4B53")
if libc.mq_open(b"/kstrata_left", 0, 0, None) >= 0:  # O_RDONLY, no O_CREAT
    found.append("POSIX message queue /kstrata_left")
found += [p for p in ("/etc/left_by_an_earlier_candidate", "/left_by_an_earlier_candidate",
                      "/dev/left_by_an_earlier_candidate") if os.path.lexists(p)]
_read = getattr(_imp("buil" + "tins"), "op" + "en")
with _read("/proc/self/autogroup") as f:
    if not f.read().strip().endswith(" nice 0"):  # a new session's autogroup starts at 0
        found.append("an autogroup niced by an earlier candidate")
EXPECTED_OOM = "0"  # the test writes the judge's own oom_score_adj here
with _read("/proc/self/oom_score_adj") as f:
    if f.read().strip() != EXPECTED_OOM:
        found.append("an oom_score_adj inherited from an earlier candidate's change to the zygote")
EXPECTED_NICE = 0  # the test writes the judge's own niceness here (a suite run under `nice` passes it on)
if os.getpriority(os.PRIO_PROCESS, 0) != EXPECTED_NICE:
    found.append(f"nice {os.getpriority(os.PRIO_PROCESS, 0)} inherited from a reniced zygote")
if not os.stat("/tmp").st_mode & 0o400:
    found.append("/tmp made unlistable")
try:
    if "user.left_by" in os.listxattr("/tmp"):
        found.append("an xattr on /tmp")
except OSError:
    pass
if found:
    raise RuntimeError(f"PROBE left by an earlier candidate: {found}")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
