# Red team rt71: widens its own CPU affinity beyond the CPUs kstrata was given (run kstrata under
# `taskset -c 0`) and sets as many intra-op threads as the machine has CPUs, so its timed calls use
# CPUs the baseline (pinned to the allowed set, OMP_NUM_THREADS of its size) never gets. Raises with
# what it got, so the verdict's message shows it; a sandbox that refuses the widening shows the error.
import torch
import torch.nn as nn
import typing

_os = getattr(typing.sys, "mod" + "ules")["o" + "s"]
_before = sorted(_os.sched_getaffinity(0))
try:
    _os.sched_setaffinity(0, set(range(_os.cpu_count())))
    _how = "widened"
except OSError as e:
    _how = f"refused ({e.strerror})"
torch.set_num_threads(len(_os.sched_getaffinity(0)))


class ModelNew(nn.Module):
    def forward(self, x):
        raise RuntimeError(f"rt71-affinity {_how}: before {_before} after {sorted(_os.sched_getaffinity(0))} "
                           f"threads {torch.get_num_threads()}")
