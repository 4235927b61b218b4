# A "stabilised" mean(exp(x)) that shifts by ONE maximum for the whole batch instead of one per
# row (a common slip when the per-row max is hoisted out of the row loop). Exact for every
# input whose global maximum stays below fp32's exp overflow (88.7): normal, uniform, shifted,
# near_zero and heavy_tailed draws alike. On the 'large' draw exp(max) is inf, so EVERY row
# becomes inf or NaN, including the ~19% of rows (all 8 values below 88.7) where the task's own
# fp32 reference is finite and correct.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        m = x.max()
        return torch.exp(x - m).mean(dim=-1) * torch.exp(m)
