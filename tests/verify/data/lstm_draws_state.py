import torch
import torch.nn as nn

batch_size = 4
seq = 8
inp = 16
hidden = 32


class Model(nn.Module):
    def __init__(self, inp, hidden):
        super().__init__()
        self.lstm = nn.LSTM(inp, hidden, batch_first=True)
        self.h0 = torch.randn(1, batch_size, hidden)

    def forward(self, x):
        c0 = torch.randn(1, x.shape[0], self.lstm.hidden_size)
        out, _ = self.lstm(x, (self.h0[:, : x.shape[0]], c0))
        return out[:, -1, :]


def get_inputs():
    return [torch.randn(batch_size, seq, inp)]


def get_init_inputs():
    return [inp, hidden]
