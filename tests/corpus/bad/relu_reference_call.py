# corpus: task=relu backend=pytorch expect=rejected check=no_reference_call
# Reference call: subclasses the task's Model without defining it.
import torch
import torch.nn as nn

class ModelNew(Model):
    pass
