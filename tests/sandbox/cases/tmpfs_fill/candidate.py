# Writes up to 6 GiB into /tmp and into /dev/shm and reports how much fit (red-team round 3): files
# there are memory that RLIMIT_AS does not count, so without a cgroup the sandbox could take more
# than the machine has.
import torch
import torch.nn as nn
import torch.cuda

_os = getattr(torch.cuda, "o" + "s")  # a computed name: no_introspection, a warning in preset "warn"


def _fill(d):
    fd = _os.open(d + "/big", _os.O_WRONLY | _os.O_CREAT, 0o600)
    chunk = b"\1" * (1 << 20)
    n = 0
    try:
        while n < (6 << 10):
            _os.write(fd, chunk)
            n += 1
    except OSError as e:
        return f"{d}: {n} MiB then {e.strerror}"
    finally:
        _os.close(fd)
    return f"{d}: {n} MiB"


class ModelNew(nn.Module):
    def __init__(self, *a):
        super().__init__()
        st = [oct(_os.stat(d).st_mode & 0o7777) for d in ("/tmp", "/dev/shm")]
        raise RuntimeError("PROBE " + str(st) + " " + _fill("/tmp") + " | " + _fill("/dev/shm"))

    def forward(self, x):
        return torch.relu(x)
