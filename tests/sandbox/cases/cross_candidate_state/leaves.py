"""A correct softmax that leaves state where a later candidate's process could
find it: a file in /tmp (also a Triton cache entry, a module), one in
/dev/shm, a directory it made unwritable, a System V shared memory segment,
a POSIX message queue, an extended attribute on /tmp, files in /etc, / and
/dev, its zygote reniced to 19, its session's autogroup (the whole sandbox's
CPU share) set to nice 19, the zygote's oom_score_adj lowered (a root kstrata set its floor to 1000), and /tmp itself
made unlistable (mode 0333), which hid every file in it from the scrub."""

import torch
import torch.nn as nn

# past the static checks (as preset "warn" lets through): the sandbox must hold by itself
_imp = __builtins__["__import__"] if isinstance(__builtins__, dict) else getattr(__builtins__, "__import__")
os, ctypes = _imp("o" + "s"), _imp("ct" + "ypes")

with getattr(_imp("buil" + "tins"), "op" + "en")("/tmp/left_by_an_earlier_candidate", "w") as f:
    f.write("A was here")
os.makedirs("/tmp/.triton/cache/planted", exist_ok=True)
with getattr(_imp("buil" + "tins"), "op" + "en")("/tmp/kstrata_task/torch_helpers.py", "w") as f:
    f.write("PLANTED = True\n")
if os.path.isdir("/dev/shm"):
    with getattr(_imp("buil" + "tins"), "op" + "en")("/dev/shm/left_by_an_earlier_candidate", "w") as f:
        f.write("A was here")
if not os.path.lexists("/tmp/locked"):  # a process may load the candidate more than once
    os.makedirs("/tmp/locked/inner")
    os.chmod("/tmp/locked", 0)
libc = ctypes.CDLL(None, use_errno=True)
libc.shmget(0x4B53, 4096, 0o1600)  # IPC_CREAT | 0600
q = libc.mq_open(b"/kstrata_left", 2 | 64, 0o600, None)  # O_RDWR | O_CREAT (refused by seccomp: -1)
if q >= 0:
    libc.mq_send(q, b"A was here", 10, 0)
try:
    os.setxattr("/tmp", "user.left_by", b"A")
except OSError:
    pass  # a tmpfs without user xattrs
for path in ("/etc/left_by_an_earlier_candidate", "/left_by_an_earlier_candidate"):
    try:  # the sandbox's root (read-only since 2026-12-02)
        with getattr(_imp("buil" + "tins"), "op" + "en")(path, "w") as f:
            f.write("A was here")
    except OSError:
        pass
libc.setpriority(0, os.getppid(), 19)  # renice the zygote (refused by seccomp: -1)
for path, value in (("/proc/self/autogroup", "19"),  # the session's: the zygote's and every later process's
                    ("/proc/1/oom_score_adj", "0"),  # the zygote's own (1000), inherited by its forks: lowered
                    ("/dev/left_by_an_earlier_candidate", "A was here")):  # (/dev is read-only since 2026-12-04)
    try:
        with getattr(_imp("buil" + "tins"), "op" + "en")(path, "w") as f:
            f.write(value)
    except OSError:
        pass
os.chmod("/tmp", 0o333)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
