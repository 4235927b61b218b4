# corpus: task=relu backend=pytorch expect=compile_error check=syntax
# Does not parse.
import torch
import torch.nn as nn

class ModelNew(nn.Module:
    pass
