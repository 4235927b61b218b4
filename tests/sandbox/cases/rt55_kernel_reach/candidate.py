"""Reaches for what a network namespace and a read-only root do not cover
(red-team round rt55):

* an AF_VSOCK socket: vsock is not isolated by network namespaces, so the
  candidate bound (and could connect to) ports of the machine's
  hypervisor channel (CID 2 is the host), the same port space the host's own
  processes use ("Address already in use" for a port bound outside);
* other socket families no backend needs (AF_PACKET, AF_ALG, ...);
* ``/proc/sys``: bubblewrap leaves it writable, and where kstrata runs as
  root the candidate's uid 65534 is the host's root, which the sysctl files
  check (not capabilities): it wrote global kernel settings
  (``vm.stat_interval``; ``kernel.core_pattern``, which runs a program as the
  host's root, was writable too).

It writes back the value it read (nothing changes), and reports at import, as
a load error (``PROBE{json}ENDPROBE``). Past the static checks (as preset
"warn" lets through)."""

import torch
import torch.nn as nn

_imp = __builtins__["__import__"] if isinstance(__builtins__, dict) else getattr(__builtins__, "__import__")
os, json, socket = _imp("o" + "s"), _imp("json"), _imp("sock" + "et")
_open = getattr(_imp("buil" + "tins"), "op" + "en")


def _family(family, kind):
    s = socket.socket(family, kind)
    s.close()
    return "made"


def _vsock_bind():
    s = socket.socket(40, socket.SOCK_STREAM)  # AF_VSOCK
    s.bind((0xFFFFFFFF, 47999))
    s.close()
    return "bound"


def _sysctl_write_back():
    path = "/proc/sys/vm/stat_interval"
    with _open(path) as f:
        value = f.read()
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)
    return "written"


def _pair():
    a, b = socket.socketpair()
    a.close()
    b.close()
    return "made"


PROBES = {
    "vsock": lambda: _family(40, socket.SOCK_STREAM),
    "vsock_bind": _vsock_bind,
    "packet": lambda: _family(17, socket.SOCK_DGRAM),  # AF_PACKET
    "alg": lambda: _family(38, socket.SOCK_SEQPACKET),  # AF_ALG
    "inet": lambda: _family(socket.AF_INET, socket.SOCK_STREAM),  # loopback of its own namespace: allowed
    "inet6": lambda: _family(socket.AF_INET6, socket.SOCK_DGRAM),
    "unix": lambda: _family(socket.AF_UNIX, socket.SOCK_STREAM),
    "unix_pair": _pair,
    "netlink": lambda: _family(16, socket.SOCK_RAW),  # AF_NETLINK (glibc's getaddrinfo uses it)
    "sysctl_write": _sysctl_write_back,
    "sysctl_core_pattern_writable": lambda: os.access("/proc/sys/kernel/core_pattern", os.W_OK),
    "sysctl_read": lambda: _open("/proc/sys/kernel/ns_last_pid").read().strip().isdigit(),
    "hostname": lambda: _open("/proc/sys/kernel/hostname").read().strip(),
}
R = {}
for key, probe in PROBES.items():
    try:
        R[key] = probe()
    except OSError as e:
        R[key] = "ERR " + type(e).__name__ + " " + str(e.errno)
raise RuntimeError("PROBE" + json.dumps(R) + "ENDPROBE")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
