# corpus: task=relu backend=pytorch expect=timeout check=wall_clock timeout=30
# Hangs forever in its first call. Asleep, not spinning: the test waits out the
# time limit, and a spinning candidate would take a core from the other tests on
# a 2-core CI machine for all of it. The limit leaves a loaded machine room to
# start the sandbox and load the candidate before the call (with 8 s the zygote's
# start used it all and the call never ran: test_corpus now checks that it did).
import time

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        while True:
            time.sleep(60)
