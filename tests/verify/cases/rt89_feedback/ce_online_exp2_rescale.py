"""Cross-entropy as an online logsumexp over chunks of 256 classes whose running sum is rescaled by
2^(m_old - m_new), a natural-log difference under exp2 (the log2(e) factor forgotten): right when the row's
maximum is in its first chunk, wrong otherwise, on every draw whose values spread enough (normal, offset both
ways, ...). Queue round rt89 (a Triton kernel on triton-interp): the offset draw's item read "rows moved either
way are wrong ...: the size of the values, not their sign, breaks the kernel (a one-pass variance ...)", while the
task's own normal draw failed too."""

import torch
import torch.nn as nn

CHUNK = 256


class ModelNew(nn.Module):
    def forward(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        z = logits.float()
        m = torch.full(z.shape[:1], float("-inf"), dtype=z.dtype)
        s = torch.zeros(z.shape[:1], dtype=z.dtype)
        for c0 in range(0, z.shape[1], CHUNK):
            part = z[:, c0:c0 + CHUNK]
            m_new = torch.maximum(m, part.max(1).values)
            scale = torch.where(m == float("-inf"), torch.zeros_like(m), torch.exp2(m - m_new))
            s = s * scale + torch.exp(part - m_new[:, None]).sum(1)
            m = m_new
        return (m - z.gather(1, labels[:, None])[:, 0]) + torch.log(s)
