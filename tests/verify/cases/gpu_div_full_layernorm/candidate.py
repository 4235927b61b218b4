"""What the shipped Triton LayerNorm does on a GPU, in PyTorch (see README.md): one pass,
BLOCK_D = next_pow2(D), 4 warps of 32 threads, 4 columns per thread per 512-column repeat;
per-thread sequential fp32 sums, warp butterfly, then warps;
approximate division (2 ulp off where D is no power of two) and 1/sqrt (2 ulp off). Expected: correct."""
import torch
import torch.nn as nn

T = 128


def _tl_sum(v):  # v: (B, BLOCK) float32, zeros past D
    B, BLOCK = v.shape
    reps = max(BLOCK // 512, 1)
    if BLOCK >= 512:
        r = v.reshape(B, reps, T, 4).permute(0, 2, 1, 3).reshape(B, T, reps * 4)
    else:
        r = torch.nn.functional.pad(v, (0, 512 - BLOCK)).reshape(B, 1, T, 4).permute(0, 2, 1, 3).reshape(B, T, 4)
    acc = torch.zeros(B, T, dtype=torch.float32)
    for k in range(r.shape[2]):
        acc = acc + r[:, :, k]
    w = acc.reshape(B, 4, 32)
    for s in (16, 8, 4, 2, 1):
        idx = torch.arange(32) ^ s
        w = w + w[:, :, idx]
    w = w[:, :, 0]
    return (w[:, 0] + w[:, 1]) + (w[:, 2] + w[:, 3])


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.bias = nn.Parameter(0.1 * torch.randn(dim))

    def forward(self, x):
        shp = x.shape
        D = shp[-1]
        x2 = x.reshape(-1, D).float()
        B = x2.shape[0]
        BLOCK = 1 << (D - 1).bit_length()
        xp = torch.zeros(B, BLOCK, dtype=torch.float32)
        xp[:, :D] = x2
        mean = _tl_sum(xp) / D
        up = torch.full_like(mean, 1e30)
        mean = mean if D & (D - 1) == 0 else torch.nextafter(torch.nextafter(mean, up), up)
        xc = xp - mean[:, None]
        xc[:, D:] = 0
        var = _tl_sum(xc * xc) / D
        var = var if D & (D - 1) == 0 else torch.nextafter(torch.nextafter(var, up), up)
        rstd = 1.0 / torch.sqrt(var + self.eps)
        rstd = torch.nextafter(torch.nextafter(rstd, torch.full_like(rstd, 1e30)), torch.full_like(rstd, 1e30))
        y = xc[:, :D] * rstd[:, None] * self.weight.float() + self.bias.float()
        return y.reshape(shp).to(x.dtype)
