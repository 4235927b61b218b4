# Suite task `w4a16_gemv` (tolerance kind "quant": cosine >= 0.95, rel_l1 <= 0.05, rmse <= 0.10),
# backend `pytorch`.  The reference's math exactly, except a classic last-tile bug at scale: when the
# output has more than 4000 features, the last 8 are never computed (zeros).  Those 8 outputs are
# simply wrong (100% error each), not quantization noise.
import torch
import torch.nn as nn

GROUP = 128


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, group: int = GROUP):
        super().__init__()
        self.group = group
        w = 0.02 * torch.randn(out_features, in_features // group, group)
        scale = w.abs().amax(dim=-1, keepdim=True).clamp_min(1e-8) / 7
        q = (torch.round(w / scale).clamp(-8, 7) + 8).to(torch.uint8).reshape(out_features, -1)
        self.register_buffer("packed", q[:, 0::2] | (q[:, 1::2] << 4))
        self.register_buffer("scales", scale.squeeze(-1).half())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = self.packed.shape[0]
        rows = n - 8 if n > 4000 else n           # the last tile of 8 outputs is skipped at scale
        packed = self.packed[:rows]
        low = packed & 0x0F
        high = packed >> 4
        q = torch.stack((low, high), dim=-1).reshape(rows, -1)
        w = (q.to(x.dtype) - 8) * self.scales[:rows].to(x.dtype).repeat_interleave(self.group, dim=1)
        y = torch.zeros(x.shape[0], n, dtype=x.dtype, device=x.device)
        y[:, :rows] = x @ w.t()
        return y
