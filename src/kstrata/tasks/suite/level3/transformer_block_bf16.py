"""Pre-norm causal transformer block in bfloat16
(GPT-2 style; Radford et al. 2019, Vaswani et al. 2017):
h = x + Proj(CausalSelfAttention(LN1(x))); y = h + W2 GELU(W1 LN2(h)).
Attention heads NH of width D / NH; the softmax scale is 1/sqrt(D / NH)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KSTRATA = {
    "level": 3,
    "category": "transformer",
    "dtype": "bfloat16",
    "description": "One decoder block on x (B, S, D): LayerNorm, fused QKV Linear(D, 3D), "
    "causal multi-head SDPA, output Linear(D, D), residual; LayerNorm, Linear(D, 4D), GELU, "
    "Linear(4D, D), residual. All Linear layers have biases.",
    "shapes": {
        "nominal": {"B": 4, "S": 1024, "D": 1024, "NH": 16},
        "small": [{"B": 2, "S": 16, "D": 32, "NH": 2}, {"B": 1, "S": 7, "D": 48, "NH": 3}],
        "sweep": [
            {"B": 1, "S": 2, "D": 16, "NH": 1},
            {"B": 2, "S": 33, "D": 80, "NH": 5},
            {"B": 1, "S": 127, "D": 128, "NH": 2},
            {"B": 1, "S": 257, "D": 256, "NH": 4},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "near_zero"],
    "precision": {"allow_reduced_precision": True},
    # QKV (6*BSD^2), causal attention (2*B*S*(S+1)*D), out proj (2*BSD^2), MLP (16*BSD^2),
    # plus norms, GELU, softmax and residuals (about 40 per token-channel)
    "flops": "24*B*S*D*D + 2*B*S*(S+1)*D + 40*B*S*D",
    # read x and all weights (12*D*D + 13*D), write y (2-byte elements)
    "bytes": "2*(2*B*S*D + 12*D*D + 13*D)",
    "tags": ["transformer", "attention", "graph", "half"],
}

B = 4
S = 1024
D = 1024
NH = 16
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, dim: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(dim, eps=EPS)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim, eps=EPS)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        for ln in (self.ln1, self.ln2):
            nn.init.normal_(ln.weight, 1.0, 0.1)
            nn.init.normal_(ln.bias, 0.0, 0.1)
        self.to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.n_heads, d // self.n_heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))


def get_inputs():
    return [torch.randn(B, S, D).to(torch.bfloat16)]


def get_init_inputs():
    return [D, NH]
