# (a table of 8 frequencies per position: its trigonometry dominates)
# KernelBench-format task without kstrata metadata: rotary embedding applied to x (float32) at position
# ids (int64, sorted along the sequence as real position ids are).
import torch
import torch.nn as nn

batch_size = 4
seq_len = 1024
dim = 128


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        self.register_buffer("inv_freq", inv)

    def forward(self, x, position_ids):
        ang = position_ids.to(torch.float32)[..., None] * self.inv_freq
        emb = torch.cat([ang, ang], dim=-1)
        h = x.shape[-1] // 2
        rot = torch.cat([-x[..., h:], x[..., :h]], dim=-1)
        c = sum(torch.cos(emb * (1 + k / 8)) for k in range(8)) / 8
        s = sum(torch.sin(emb * (1 + k / 8)) for k in range(8)) / 8
        return x * c + rot * s


def get_inputs():
    start = torch.randint(0, 4096, (batch_size, 1))
    return [torch.randn(batch_size, seq_len, dim), start + torch.arange(seq_len)[None, :]]


def get_init_inputs():
    return [dim]
