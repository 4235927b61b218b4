# For the shipped suite task `softmax`. A "vectorised" softmax whose denominator is summed in
# groups of 4 lanes plus a tail. The tail of 1 or 3 columns is added; a tail of 2 columns is
# handled by a separate paired-lane path that only exists for narrow rows (D < 64). For wide
# rows with D % 4 == 2 the last two columns are left out of the denominator (relative error
# ~2/D, e.g. 2e-3 at D = 1002: far outside the fp32 tolerance).
# No public, sweep, nominal or fitted timing width of the task has D % 4 == 2 with D >= 64
# (512, 77, 2, 4099, 1001, 65537, 4096, 1024/2048); only the secret perturbations
# (sweep width +-1..7) sometimes land there, so the verdict depends on the run's secret.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        b, d = x.shape
        m = x.amax(dim=1, keepdim=True)
        e = torch.exp(x - m)
        body = d - d % 4
        s = e[:, :body].reshape(b, -1, 4).sum(dim=2).sum(dim=1, keepdim=True)
        tail = d % 4
        if tail in (1, 3) or (tail == 2 and d < 64):
            s = s + e[:, body:].sum(dim=1, keepdim=True)
        return e / s
