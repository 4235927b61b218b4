# case 04 patcher, importing the judge modules itself (the original finds none in sys.modules): a correct softmax that patches compare/agree in its own process
import torch
import torch.nn as nn
import typing

_s = getattr(typing, "s" + "ys")  # computed names: no_introspection, a warning at preset "warn"
_m = getattr(_s, "modules")
_r = _m["importlib"].import_module("kstrata.verify.runner")
_C = _m["importlib"].import_module("kstrata.verify.tolerance").Comparison
_r.compare = lambda c, o, n, t: _C(True, None, {"policy": "oracle", "wrong": 0, "max_err": 0.0})
_r.agree = lambda a, b, d, t: True

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
