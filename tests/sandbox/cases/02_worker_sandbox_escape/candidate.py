# Sandbox probe (case 02, rewritten to report its results): everything the original
# probe tried, each step caught, and the results raised at import as one JSON line
# ("PROBE{...}"), which the judge reports as the load error's message.
# <checkout> and <port> are replaced by the test. Static bypasses as in the original:
# os as torch.os, builtins as print.__self__, modules through typing.sys.
import torch
import torch.nn as nn
import typing

_os = getattr(torch, "o" + "s")  # computed names: no_introspection, a warning at preset "warn"
_b = print.__self__
_s = getattr(typing, "s" + "ys")  # computed names: no_introspection, a warning at preset "warn"
_mods = getattr(_s, "modules")
_imp = _mods["importlib"]
_R = {}


def _try(k, f):
    try:
        _R[k] = f()
    except BaseException as e:  # noqa: BLE001
        _R[k] = "ERR " + type(e).__name__ + ": " + str(e)[:200]


def _read(p):
    return _b.open(p, "rb").read()


def _conn(tag):
    sock = _imp.import_module("socket")
    c = sock.socket()
    c.settimeout(2)
    r = c.connect_ex(("127.0.0.1", <port>))
    if r == 0:
        c.send(tag.encode())
    c.close()
    return r


def _key_in_all_environ():
    hits = []
    for p in _os.listdir("/proc"):
        if p.isdigit():
            try:
                if b"sk-test-fake" in _read(f"/proc/{p}/environ"):
                    hits.append(p)
            except OSError:
                pass
    return hits


def _setns():
    ct = _imp.import_module("ctypes")
    libc = ct.CDLL(None, use_errno=True)
    fd = _os.open(f"/proc/{_os.getppid()}/ns/net", 0)
    r = libc.setns(fd, 0x40000000)
    return [r, ct.get_errno()]


def _setns_init():
    ct = _imp.import_module("ctypes")
    libc = ct.CDLL(None, use_errno=True)
    fd = _os.open("/proc/1/ns/net", 0)
    r = libc.setns(fd, 0x40000000)
    return [r, ct.get_errno()]


def _write_src():
    p = "<checkout>/src/kstrata/verify/_redteam_marker.txt"
    _b.open(p, "w").write("written by a candidate\n")
    return _os.path.exists(p)


def _procs_cmdlines():
    sp = _imp.import_module("subprocess")
    out = sp.run(["/bin/sh", "-c", "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done"],
                 capture_output=True, text=True, timeout=20).stdout
    return [line for line in out.splitlines() if line.strip()]


_try("uid", lambda: _os.getuid())
_try("euid", lambda: _os.geteuid())
_try("popen_id", lambda: _os.popen("id -u").read().strip())
_try("key_in_own_env", lambda: "OPENAI_API_KEY" in _os.environ)
_try("ppid", lambda: _os.getppid())
_try("parent_environ_has_key", lambda: b"sk-test-fake" in _read(f"/proc/{_os.getppid()}/environ"))
_try("key_in_any_environ", _key_in_all_environ)
_try("connect_netns", lambda: _conn("worker-netns"))
_try("setns_parent", _setns)
_try("connect_after_setns", lambda: _conn("after-setns"))
_try("setns_init", _setns_init)
_try("connect_after_setns_init", lambda: _conn("after-setns-init"))
_try("repo_pyproject", lambda: _b.open("<checkout>/pyproject.toml").readline())
_try("repo_developers", lambda: _b.open("<checkout>/DEVELOPERS.md").readline())
_try("repo_tests", lambda: _os.listdir("<checkout>/tests"))
_try("repo_git", lambda: _os.listdir("<checkout>/.git"))
_try("root_entries", lambda: _os.listdir("/root"))
_try("wrote_src", _write_src)
_try("subprocess_cmdlines", _procs_cmdlines)

raise RuntimeError("PROBE" + _mods["json"].dumps(_R) + "ENDPROBE")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
