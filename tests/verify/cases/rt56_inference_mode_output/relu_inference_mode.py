import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """An honest relu whose forward runs under torch.inference_mode (as serving code such as vLLM's and
    Hugging Face's does): its output is an inference tensor."""

    def __init__(self):
        super().__init__()

    @torch.inference_mode()
    def forward(self, x):
        return torch.relu(x)
