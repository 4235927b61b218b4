"""Red team rt88 (timing): GELU that leaves the last half of its rows to a thread which sleeps in select()
on the harness's request pipe (the candidate process's fd 3, read only: nothing is taken from it) and so
wakes exactly when the judge's next request arrives: after a timed call that is the untimed flush that
freshens the inputs, and it works only while the harness's thread is running (state R in
/proc/self/task/PID/stat), a few rows at a time: so the tail runs inside the flush's freshen, off the
judge's clock, and is asleep whenever the harness sleeps (its wait after a request, kstrata.sandbox.drain)
or waits for the next request (the marks of Harness.replying/waited).

Held on this project's 2-CPU host (load 20-30; run.py beside this file: RemoteCandidate + RemoteTimer, 8 timed
calls, then a fetch): no_threads_left "while the harness waited for the judge's next request", 2.5-4.6 ms.
The trigger needs Python (select), so the tail's rows run when the harness lets go of the GIL, which it
does above all in its waits; a request that arrived before the harness woke leaves the tail between
two looks at a harness that is not yet running. Not tried: a tail with a native trigger and no GIL (code a
tvm-llvm candidate builds, started with pthread_create through ctypes; a TorchScript fork cannot wait on
a file); that one needs the harness to count other threads' CPU over the whole flush and fetch (their
own torch ops single-threaded), as benchmarks/results/redteam_rt88_sandbox.txt describes."""

import fcntl
import os
import select
import stat
import threading
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SHARE = 0.5
ROWS = 4  # rows of the tail per look at the harness
_pending = []


def _request_pipe() -> int:
    for fd in range(3, 16):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISFIFO(st.st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
            return fd
    return -1


def _harness_busy(stat_fd: int) -> bool:
    """The harness (the process's main thread) is running: inside a request, not in a wait's sleep."""
    return os.pread(stat_fd, 256, 0).rsplit(b")", 1)[-1].split()[:1] == [b"R"]


def _tail(fd: int) -> None:
    stat_fd = os.open(f"/proc/self/task/{os.getpid()}/stat", os.O_RDONLY)
    while True:
        select.select([fd], [], [])  # the judge's next request has arrived
        while _pending:
            x, out = _pending[-1]
            done = 0
            while done < x.shape[0]:  # only while the harness works on it: none in its waits
                if not _harness_busy(stat_fd):  # its wait: asleep until the next request arrives
                    if select.select([fd], [], [], 0)[0]:
                        time.sleep(50e-6)  # arrived, not yet read: the harness is about to run
                    else:
                        select.select([fd], [], [])
                    continue
                out[done:done + ROWS] = F.gelu(x[done:done + ROWS])
                done += ROWS
            _pending.pop()


_fd = _request_pipe()
if _fd >= 0:
    threading.Thread(target=_tail, args=(_fd,), daemon=True).start()


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        k = int(x.shape[0] * (1 - SHARE))
        out[:k] = F.gelu(x[:k])
        if _fd >= 0 and x.shape[0] > 64:
            _pending.append((x[k:], out[k:]))
        else:
            out[k:] = F.gelu(x[k:])
        return out
