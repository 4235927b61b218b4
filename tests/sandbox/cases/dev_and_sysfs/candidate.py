"""Looks for what the sandbox shares beyond /tmp and /dev/shm (which the
zygote empties after each candidate): /dev was a writable tmpfs of its own, so
a file left there, or its /dev/fd and /dev/stdout links pointed elsewhere,
outlived the candidate for every later one the zygote forks (another LLM
answer of the run, the eager baseline's timing process); /sys/fs/cgroup (the
host's, bound read-only with /sys) named other runs' sandboxes and the
judge's cgroup, with their memory and process counts (red-team round of
2026-12-04). Reports at import, as a load error (``PROBE{json}ENDPROBE``).
Past the static checks (as preset "warn" lets through)."""

import torch
import torch.nn as nn

_imp = __builtins__["__import__"] if isinstance(__builtins__, dict) else getattr(__builtins__, "__import__")
os, json = _imp("o" + "s"), _imp("json")
_open = getattr(_imp("buil" + "tins"), "op" + "en")


def _write(path):
    with _open(path, "w") as f:
        f.write("left by an earlier candidate")
    return "written"


def _relink(path):
    os.unlink(path)
    os.symlink("/tmp", path)
    return "replaced"


def _cgroups():
    out = []
    for top, dirs, _ in os.walk("/sys/fs/cgroup"):
        out += [os.path.join(top, d) for d in dirs]
        if len(out) > 200:
            break
    return out


PROBES = {
    "dev_file": lambda: _write("/dev/left_by_an_earlier_candidate"),
    "dev_dir": lambda: os.mkdir("/dev/left_dir") or "made",
    "dev_fd_link": lambda: _relink("/dev/fd"),
    "dev_stdout_link": lambda: _relink("/dev/stdout"),
    "dev_shm_file": lambda: _write("/dev/shm/allowed"),  # the scrubbed tmpfs: writable
    "dev_null_write": lambda: _write("/dev/null"),
    "sys_fs": lambda: os.listdir("/sys/fs"),
    "cgroups": _cgroups,
    "cpu_topology": lambda: len(os.listdir("/sys/devices/system/cpu")) > 0,
}
R = {}
for key, probe in PROBES.items():
    try:
        R[key] = probe()
    except OSError as e:
        R[key] = "ERR " + type(e).__name__
raise RuntimeError("PROBE" + json.dumps(R) + "ENDPROBE")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
