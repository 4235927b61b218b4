"""What the judge split and the sandbox add to one verification (issue #16).

Four configurations verify the same candidates (each level-1 suite task's
initial ``pytorch`` candidate, ``--scope``, default ``full``) in one reused judge worker,
as ``kstrata optimize`` does:

* ``same-process``: this commit's judge, every check included, with the
  candidate process's harness called in the judge's own process (no process,
  no wire, no sandbox): the baseline of the target, since only the split and
  the sandbox differ from the two configurations below;
* ``split``: the judge and a fresh candidate process per candidate, without
  the OS sandbox (``--unsafe-no-sandbox``);
* ``sandboxed``: the same under bubblewrap (the default);
* ``old``: kstrata before round two (commit ``--old``, default 21227a1,
  checked out into a temporary git worktree and put first on the worker's
  ``PYTHONPATH``), for reference: the difference to ``same-process`` is what
  round two's checks cost (two poison patterns per test, timed shapes, the
  weak-task check, ...), not the split.

Each round verifies every task once per configuration, configurations one
after another, and ``--repeat`` rounds are run (interleaved, so load changes
hit every configuration alike); the first verification of each configuration
in a round warms it (worker start, imports) and is not counted. It prints
the median seconds per task per configuration and what the split and the
sandbox add, in seconds and as a share of the same-process median (target:
at most 10%).

Usage: python benchmarks/sandbox_cost.py [--tasks relu,gelu,...] [--repeat 3] [--old REV] [--scope full|small]

The target is judged by the median per-round ratio sandboxed / same-process.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ("same-process", "split", "sandboxed", "old")
DEFAULT_TASKS = "relu,gelu,sigmoid,softmax,log_softmax,rmsnorm,layernorm,sum_dim,max_dim,mean_dim"

CHILD = r"""
import json, os, statistics, sys, time
if os.environ.get("KSTRATA_BENCH_SAME_PROCESS"):
    # this commit's judge with the candidate's harness called in the judge's own process: no
    # process, no wire, no sandbox (for measurement only; never how kstrata runs a candidate)
    import kstrata.verify.runner as runner
    from kstrata.sandbox.child import Harness

    class SameProcess:
        memory_mb = None

        def __init__(self):
            self.h = Harness()

        def request(self, header, buffers=(), timeout_s=None, limit=None):
            op = {"load": self.h.load, "call": self.h.call, "call_many": self.h.call_many}[header["op"]]
            return op(header, [bytes(memoryview(b).cast("B")) for b in buffers])

        def output_tail(self, n=2000):
            return ""

        def close(self):
            pass

        kill = close

    runner.fresh = lambda spec, timeout_s=300.0: SameProcess()
from kstrata.backends.registry import get_backend
from kstrata.execute import WorkerPool
from kstrata.tasks.loader import resolve_task
from kstrata.verify import verify_candidate
names, repeat, scope = sys.argv[1].split(","), int(sys.argv[2]), sys.argv[3]
b = get_backend("pytorch")
out = {}
with WorkerPool(size=1) as pool:
    t = resolve_task(names[0])
    verify_candidate(t, "pytorch", b.initial_sources(t), secret="bench" * 7, pool=pool, scope=scope)
    for name in names:
        t = resolve_task(name)
        runs = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            ev = verify_candidate(t, "pytorch", b.initial_sources(t), secret="bench" * 7, pool=pool,
                                  scope=scope)
            runs.append(time.perf_counter() - t0)
        out[name] = {"verdict": ev.verdict.value, "s": statistics.median(runs),
                     "tests": ev.public_tests + ev.hidden_tests}
print("RESULT " + json.dumps(out))
"""


def run(config: str, tasks: str, repeat: int, old_src: Path | None, scope: str) -> dict:
    env = dict(os.environ)
    env.pop("KSTRATA_UNSAFE_NO_SANDBOX", None)
    if config == "old":
        env["PYTHONPATH"] = f"{old_src}{os.pathsep}{env.get('PYTHONPATH', '')}"
    elif config == "split":
        env["KSTRATA_UNSAFE_NO_SANDBOX"] = "1"
    elif config == "same-process":
        env["KSTRATA_UNSAFE_NO_SANDBOX"] = "1"
        env["KSTRATA_BENCH_SAME_PROCESS"] = "1"
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", CHILD, tasks, str(repeat), scope], env=env,
                       capture_output=True, text=True, cwd=tempfile.gettempdir())
    line = next((x for x in r.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(f"{config} failed:\n{r.stderr[-3000:]}")
    import json

    return json.loads(line[len("RESULT "):])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default=DEFAULT_TASKS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--old", default="", help="also time this commit (e.g. 21227a1, before round two)")
    ap.add_argument("--scope", default="full", choices=("full", "small"),
                    help="hidden stage on the sweep shapes (full, as eval and optimize's confirmation) or small")
    args = ap.parse_args()
    configs = CONFIGS if args.old else CONFIGS[:-1]
    names = args.tasks.split(",")
    with tempfile.TemporaryDirectory(prefix="kstrata-old-") as tmp:
        if args.old:
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", tmp, args.old],
                           check=True, capture_output=True)
        try:
            # rounds interleave the configurations, so a change in the machine's load hits all alike
            rounds = [{c: run(c, args.tasks, 1, Path(tmp) / "src", args.scope) for c in configs}
                      for _ in range(args.repeat)]
        finally:
            if args.old:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", tmp],
                               capture_output=True)
    results = {c: {n: {"verdict": rounds[-1][c][n]["verdict"],
                       "s": statistics.median(r[c][n]["s"] for r in rounds)} for n in names} for c in configs}
    # per-round ratios: each round ran every configuration back to back, so a ratio within a round
    # cancels most of the load change between rounds
    ratio = {c: statistics.median(rounds[k][c][n]["s"] / rounds[k]["same-process"][n]["s"]
                                  for k in range(args.repeat) for n in names) for c in configs}
    load = os.getloadavg()
    import torch

    print(f"# sandbox_cost  {datetime.datetime.now().isoformat(timespec='seconds')}")
    print(f"# cpu: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{load[0]:.1f}; python {platform.python_version()}, torch {torch.__version__}; "
          f"scope={args.scope}, median of {args.repeat} interleaved rounds per task, one warm judge worker per "
          "configuration and round")
    print("# same-process = this commit's judge with the candidate harness in its own process; split = judge + "
          "fresh candidate process, no sandbox; sandboxed = the same under bubblewrap (what kstrata runs)"
          + (f"; old = commit {args.old}, before round two's checks" if args.old else ""))
    head = "".join(f"{c + '_s':>16}" for c in configs)
    print(f"{'task':<14}{'verdicts':<34}{head}{'added_s':>9}")
    added, base = [], []
    for name in names:
        r = [results[c][name] for c in configs]
        add = results["sandboxed"][name]["s"] - results["same-process"][name]["s"]
        added.append(add)
        base.append(results["same-process"][name]["s"])
        print(f"{name:<14}{'/'.join(x['verdict'][:7] for x in r):<34}"
              + "".join(f"{x['s']:>16.3f}" for x in r) + f"{add:>9.3f}")
    med_base = statistics.median(base)
    print(f"# median same-process verification {med_base:.3f} s; median per-round ratio to it: "
          + ", ".join(f"{c} {ratio[c]:.3f}" for c in configs[1:]))
    print(f"# the split and the sandbox together add {statistics.median(added):+.3f} s per verification "
          f"(median of per-task differences, {100 * statistics.median(added) / med_base:+.1f}% of the median); "
          f"by the per-round ratio {100 * (ratio['sandboxed'] - 1):+.1f}% (target <= +10%)")
    if args.old:
        print(f"# for reference, round two's checks: old/same-process ratio {ratio['old']:.3f}")

if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"# wall {time.time() - t0:.0f} s")
