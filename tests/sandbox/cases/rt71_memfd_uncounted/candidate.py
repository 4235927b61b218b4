# Red team rt71: in a sandbox that no cgroup holds (memory limited by RLIMIT_AS alone: a user
# without a delegated cgroup), memory written into a memfd and never mapped is counted nowhere.
# Before: 'RT71 memfd holds 1536 MiB under a 512 MiB limit'; now memfd_create fails (EPERM).
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        fd = os.memfd_create("x")
        chunk = b"x" * (1 << 20)
        for _ in range(1536):
            os.write(fd, chunk)
        raise RuntimeError(f"RT71 memfd holds {os.fstat(fd).st_size >> 20} MiB under a 512 MiB limit")
