"""A small image classifier (LeNet/VGG-style; LeCun et al. 1998, Simonyan & Zisserman 2015):
[Conv3x3(pad 1) -> ReLU -> MaxPool2] x 2 -> global average pool -> Linear(64, 10)."""

import torch
import torch.nn as nn

KSTRATA = {
    "level": 3,
    "category": "convnet",
    "dtype": "float32",
    "description": "Conv(3->32) ReLU MaxPool2, Conv(32->64) ReLU MaxPool2, global mean, "
    "Linear(64, 10) on an (N, 3, H, W) batch; output logits (N, 10). H, W >= 4.",
    "shapes": {
        "nominal": {"N": 64, "H": 224, "W": 224},
        "small": [{"N": 2, "H": 16, "W": 16}, {"N": 1, "H": 17, "W": 13}],
        "sweep": [
            {"N": 1, "H": 4, "W": 5},
            {"N": 3, "H": 33, "W": 31},
            {"N": 2, "H": 67, "W": 97},
            {"N": 4, "H": 112, "W": 112},
        ],
    },
    "distributions": ["normal", "uniform", "heavy_tailed", "large", "near_zero"],
    # conv1 (2*27 per output), conv2 at H/2 x W/2 (2*288 per output), ReLUs, pools, head
    "flops": "2*27*32*N*H*W + 2*288*64*N*(H//2)*(W//2) + 2*32*N*H*W + 2*64*N*(H//2)*(W//2)"
    " + 2*N*64*10",
    # read the images and weights, write logits (fp32); activations re-read once per layer
    "bytes": "4*(N*3*H*W + 2*32*N*H*W + 2*64*N*(H//2)*(W//2) + 896 + 18496 + 650 + N*10)",
    "tags": ["conv", "graph"],
}

N = 64
H = 224
W = 224


class Model(nn.Module):
    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Linear(64, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean(dim=(2, 3)))


def get_inputs():
    return [torch.randn(N, 3, H, W)]


def get_init_inputs():
    return [10]
