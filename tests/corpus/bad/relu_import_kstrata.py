# corpus: task=relu backend=pytorch expect=rejected check=no_reference_call
# Reference call: loads the task through kstrata and runs its Model.
import torch
import torch.nn as nn

from kstrata.tasks.loader import resolve_task

import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return resolve_task('relu').load_module().Model()(x)
