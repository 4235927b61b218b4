"""Raises an exception whose message is 40 million characters (red team
rt62): the harness's reply (message and traceback) went past the wire's
64 MiB header limit, and the verdict said the candidate had tampered with its
process's harness."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        raise ValueError("A" * 40_000_000)
