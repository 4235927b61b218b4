"""What the judge split and the sandbox add to one verification (issue #16).

Three configurations verify the same candidates (each level-1 suite task's
initial ``pytorch`` candidate, ``--scope``, default ``full``) in one reused judge worker,
as ``kstrata optimize`` does:

* ``in-process``: kstrata before the split (commit ``--old``, default
  21227a1, checked out into a temporary git worktree and put first on the
  worker's ``PYTHONPATH``): the candidate ran inside the verifier's process;
* ``split``: the judge and a fresh candidate process per candidate, without
  the OS sandbox (``--unsafe-no-sandbox``);
* ``sandboxed``: the same under bubblewrap (the default).

Each round verifies every task once per configuration, configurations one
after another, and ``--repeat`` rounds are run (interleaved, so load changes
hit every configuration alike); the first verification of each configuration
in a round warms it (worker start, imports) and is not counted. It prints
the median seconds per task per configuration and what the split and the
sandbox add, in seconds and as a share of the in-process median (target:
at most 10%).

Usage: python benchmarks/sandbox_cost.py [--tasks relu,gelu,...] [--repeat 3] [--old REV] [--scope full|small]
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
DEFAULT_TASKS = "relu,gelu,sigmoid,softmax,log_softmax,rmsnorm,layernorm,sum_dim,max_dim,mean_dim"

CHILD = r"""
import json, statistics, sys, time
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
    if config == "in-process":
        env["PYTHONPATH"] = f"{old_src}{os.pathsep}{env.get('PYTHONPATH', '')}"
    elif config == "split":
        env["KSTRATA_UNSAFE_NO_SANDBOX"] = "1"
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
    ap.add_argument("--old", default="21227a1", help="commit of the in-process verifier")
    ap.add_argument("--scope", default="full", choices=("full", "small"),
                    help="hidden stage on the sweep shapes (full, as eval and optimize's confirmation) or small")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kstrata-old-") as tmp:
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", tmp, args.old],
                       check=True, capture_output=True)
        try:
            # rounds interleave the configurations, so a change in the machine's load hits all alike
            rounds = [{c: run(c, args.tasks, 1, Path(tmp) / "src", args.scope)
                       for c in ("in-process", "split", "sandboxed")} for _ in range(args.repeat)]
            results = {c: {n: {"verdict": rounds[-1][c][n]["verdict"],
                               "s": statistics.median(r[c][n]["s"] for r in rounds)}
                           for n in args.tasks.split(",")} for c in ("in-process", "split", "sandboxed")}
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", tmp], capture_output=True)
    load = os.getloadavg()
    import torch

    print(f"# sandbox_cost  {datetime.datetime.now().isoformat(timespec='seconds')}")
    print(f"# cpu: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{load[0]:.1f}; python {platform.python_version()}, torch {torch.__version__}; "
          f"scope={args.scope}, median of {args.repeat} interleaved rounds per task, one warm judge worker per "
          "configuration and round")
    print(f"# in-process = commit {args.old}; split = judge + fresh candidate process, no sandbox; "
          "sandboxed = the same under bubblewrap")
    print(f"{'task':<16}{'verdicts':<26}{'in-process_s':>13}{'split_s':>9}{'sandboxed_s':>12}{'added_s':>9}")
    added, base = [], []
    for name in args.tasks.split(","):
        r = [results[c][name] for c in ("in-process", "split", "sandboxed")]
        add = r[2]["s"] - r[0]["s"]
        added.append(add)
        base.append(r[0]["s"])
        print(f"{name:<16}{'/'.join(x['verdict'][:7] for x in r):<26}{r[0]['s']:>13.3f}{r[1]['s']:>9.3f}"
              f"{r[2]['s']:>12.3f}{add:>9.3f}")
    med_base = statistics.median(base)
    med_split = statistics.median([results["split"][n]["s"] - results["in-process"][n]["s"]
                                   for n in args.tasks.split(",")])
    med_sb = statistics.median([results["sandboxed"][n]["s"] - results["split"][n]["s"]
                                for n in args.tasks.split(",")])
    print(f"# median in-process verification {med_base:.3f} s; the split adds {med_split:+.3f} s "
          f"({100 * med_split / med_base:+.1f}%), the sandbox on top {med_sb:+.3f} s "
          f"({100 * med_sb / med_base:+.1f}%); together {statistics.median(added):+.3f} s "
          f"({100 * statistics.median(added) / med_base:+.1f}%; target <= +10%)")


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"# wall {time.time() - t0:.0f} s")
