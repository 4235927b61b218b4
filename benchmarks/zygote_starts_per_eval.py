"""Zygote starts per evaluation: a verification (``run_protocol`` at scope ``small``) then the paired timing
against eager (``time_candidate``), in this one process, as a search's judge worker does them.

Why: between a2b2281 and c02b342 one paired timing got ~10-30 s slower per evaluation (H100 Triton
rmsnorm 10-20 s -> 27-40 s; this CPU, pytorch relu, 60 -> 91 s medians under load), while the timing
alone (requests, timed and checked calls, re-times) cost the same at both commits. Wall time on the shared
2-core machine is noise; the count of sandbox starts (``kstrata.sandbox.client.Zygote.start``, each an
interpreter that imports torch inside bubblewrap: 5-12 s here) is not.

Each ``Zygote.start`` prints the candidate's kernel-cache key (verify or time role), whether it is a
trusted (baseline) zygote, and the idle zygotes then: (same settings?, ``hidden_of``). Each candidate is a
new one (a comment line appended: new sources, new keys), as a search's next candidate is.

Usage (repository root; ``SRC`` a checkout's ``src``, e.g. a worktree of an older commit)::

    .venv/bin/python benchmarks/zygote_starts_per_eval.py SRC relu pytorch "{'B': 16, 'D': 1024}" 3

Prints per candidate: the verdict, wall seconds and zygote starts of the verification and of the timing
(since the spare zygote, kstrata.sandbox.client.start_spare, a start made in the background while the
verification runs is counted in the verification's column).
Results: benchmarks/results/eval_cost_cpu.txt.
"""

from __future__ import annotations

import ast
import os
import sys
import time


def main() -> None:
    sys.path.insert(0, sys.argv[1])
    from kstrata.backends.registry import get_backend
    from kstrata.measure.candidate import time_candidate
    from kstrata.sandbox import client
    from kstrata.sandbox.kernel_cache import candidate_key
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import run_protocol

    starts: list[float] = []
    start = client.Zygote.start

    def counted(z, *a, **k):
        starts.append(time.perf_counter())
        idle = [(i.spec.key() == z.spec.key(), (getattr(i, "hidden_of", None) or "-")[:8]) for i in client._IDLE]
        print(f"  start: kernel_cache={(z.spec.kernel_cache or '-')[:8]} trusted={z.spec.trusted}; "
              f"idle (same settings, hidden_of): {idle}", flush=True)
        t0 = time.perf_counter()
        r = start(z, *a, **k)
        print(f"  Zygote.start took {time.perf_counter() - t0:.1f} s", flush=True)
        return r

    client.Zygote.start = counted
    task, b = resolve_task(sys.argv[2]), get_backend(sys.argv[3])
    shape = ast.literal_eval(sys.argv[4])
    first = b.initial_sources(task)
    for k in range(int(sys.argv[5]) if len(sys.argv) > 5 else 2):
        src = {level: f"{text}\n# cand {k}\n" for level, text in first.items()}
        n, t0 = len(starts), time.perf_counter()
        # with the timing's shape among its tests, as a search's verification has it (VerifyMeasureEvaluator)
        ev = run_protocol(task, b.name, src, os.urandom(8).hex(), "strict", "small",
                          timed_shapes=[task.full_shape(shape)])
        print(f"cand {k} verify {ev['verdict']} {time.perf_counter() - t0:.1f} s, zygote starts {len(starts) - n}",
              flush=True)
        print("  keys: verify", candidate_key(b.name, src, "verify", task.digest)[:8],
              "time", candidate_key(b.name, src, "time", task.digest)[:8])
        n, t0 = len(starts), time.perf_counter()
        m = time_candidate(b.name, task, src, shape, baseline="eager")
        print(f"cand {k} time {time.perf_counter() - t0:.1f} s, zygote starts {len(starts) - n}, "
              f"speedup {m.speedup.point:.2f}", flush=True)


if __name__ == "__main__":
    main()
