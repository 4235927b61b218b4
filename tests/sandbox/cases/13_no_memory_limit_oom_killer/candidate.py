# Case 13, bounded for a test: touches 4 GiB (the test sets the candidate memory
# limit to 1 GiB with KSTRATA_CANDIDATE_MEMORY_MB=1024), then would return relu.
import torch
import torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        touched = torch.ones(4 * 2**30, dtype=torch.uint8)
        s = int(touched[::4096].sum())
        del touched
        return torch.relu(x) + 0 * s
