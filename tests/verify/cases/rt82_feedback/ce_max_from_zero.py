"""cross_entropy with the row maximum started at 0.0 (a padding value): on rows whose every logit is far below
0 (the offset draw's rows moved by -1000) every exp(z - 0) underflows, the sum is 0 and the loss -inf; rows
moved +1000 are right. Queue round rt82: the feedback must say which way the wrong rows were moved."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        m = logits.amax(dim=1, keepdim=True).clamp_min(0.0)  # max over the row and a padded lane of 0.0
        lse = m.squeeze(1) + torch.log(torch.exp(logits - m).sum(dim=1))
        return lse - logits.gather(1, labels.view(-1, 1)).squeeze(1)
