import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Honest: the same network run in channels_last memory format (another convolution order)."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Linear(64, num_classes)

    def forward(self, x):
        f = self.features(x.contiguous(memory_format=torch.channels_last))
        return self.head(f.mean(dim=(2, 3))).contiguous()
