# Red team rt71, OPEN: in a sandbox no cgroup holds (RLIMIT_AS alone), unix socket send buffers are counted
# nowhere: 'RT71 buffered 1536 MiB in 196 socketpairs; rss 250908 kB' under a 512 MiB limit (run it through
# kstrata.sandbox.CandidateProcess('pytorch', memory_mb=512) with policy.Cgroup.create returning None, as
# tests/sandbox/test_redteam_rt71.py's memfd test does). Under this machine's cgroup-v1 it is an oom verdict.
import torch
import torch.nn as nn
import typing

_m = getattr(typing.sys, "mod" + "ules")
_il = _m["import" + "lib"]
_so = _il.import_module("soc" + "ket")
_b = print.__self__
TARGET = 1536 << 20

def _fill():
    held = []
    total = 0
    chunk = b"x" * (1 << 16)
    err = None
    try:
        while total < TARGET:
            a, b = _so.socketpair()
            a.setsockopt(_so.SOL_SOCKET, _so.SO_SNDBUF, 4 << 20)
            b.setsockopt(_so.SOL_SOCKET, _so.SO_RCVBUF, 4 << 20)
            a.setblocking(False)
            held.append((a, b))
            while total < TARGET:
                try:
                    total += a.send(chunk)
                except BlockingIOError:
                    break
    except Exception as e:
        err = repr(e)
    rss = getattr(_b, "op" + "en")("/proc/self/status").read().split("VmRSS:")[1].split("\n")[0].strip()
    msg = f"RT71 buffered {total >> 20} MiB in {len(held)} socketpairs; rss {rss}; err {err}"
    for a, b in held:
        a.close(); b.close()
    return msg

class ModelNew(nn.Module):
    def forward(self, x):
        raise RuntimeError(_fill())
