# KernelBench-format task without kstrata metadata: rotary-embedding cos/sin tables from
# position ids (int64, sorted along the sequence as real position ids are).
import torch
import torch.nn as nn

batch_size = 8
seq_len = 512
dim = 128


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        self.register_buffer("inv_freq", inv)

    def forward(self, position_ids):
        ang = position_ids.to(torch.float32)[..., None] * self.inv_freq
        emb = torch.cat([ang, ang], dim=-1)
        return torch.cos(emb) * torch.sin(emb + 0.5)


def get_inputs():
    start = torch.randint(0, 4096, (batch_size, 1))
    return [start + torch.arange(seq_len)[None, :]]


def get_init_inputs():
    return [dim]
