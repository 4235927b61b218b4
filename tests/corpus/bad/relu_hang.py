# corpus: task=relu backend=pytorch expect=timeout check=wall_clock timeout=10
# Hangs forever in its first call. Asleep, not spinning: the test waits out the
# time limit, and a spinning candidate would take a core from the other tests on
# a 2-core CI machine for all of it. The sandbox's start does not count against
# the limit since feb24f0 (it did when 30 s was needed: with 8 s the zygote's
# start used it all and the call never ran; test_corpus checks that it did).
import time

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        while True:
            time.sleep(60)
