"""Why kstrata's workers fix glibc's malloc thresholds (``GLIBC_TUNABLES``), and
how far apart an A/A pair reads on this machine.

Runs ``kstrata eval gelu`` on the unchanged reference (verify case 03: the
same code in the candidate and the baseline process) ``N`` times in each of
two settings, at the task's small scope with a 300 ms timing budget:

``kstrata default``  GLIBC_TUNABLES from :data:`kstrata.execute.pool.MALLOC_TUNABLES`
                     (fixed mmap and trim thresholds)
``glibc default``    GLIBC_TUNABLES empty: glibc's dynamic thresholds, which follow
                     what each process freed before

and prints each run's speedup with its interval and both medians (ms). An A/A
pair should read 1.0 with an interval that contains it.

Usage: ``python benchmarks/malloc_regime.py [N]`` (output:
``benchmarks/results/malloc_regime.txt``).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

import torch

from kstrata.execute.pool import MALLOC_TUNABLES
from kstrata.measure.environment import cpu_name

ROOT = Path(__file__).resolve().parents[1]
CANDIDATE = ROOT / "tests" / "verify" / "cases" / "03_tie_counted_as_faster" / "candidate.py"
SETTINGS = {"kstrata default": MALLOC_TUNABLES, "glibc default": ""}


def one(tunables: str) -> dict:
    env = {**os.environ, "GLIBC_TUNABLES": tunables}
    kstrata = Path(sys.executable).parent / "kstrata"
    out = subprocess.run([str(kstrata), "eval", "gelu", str(CANDIDATE), "--backend", "pytorch", "--json",
                          "--scope", "small", "--budget-ms", "300"],
                         capture_output=True, text=True, env=env, timeout=600, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["timing"]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    print(f"# {datetime.date.today()} {platform.node()} cpu={cpu_name()} cpus={os.cpu_count()} "
          f"python={platform.python_version()} torch={torch.__version__} load={os.getloadavg()[0]:.2f}")
    print("# kstrata eval gelu <case 03 candidate> --backend pytorch --scope small --budget-ms 300")
    for name, tunables in SETTINGS.items():
        points, misses = [], 0
        print(f"\n## {name} (GLIBC_TUNABLES={tunables!r})")
        print(f"{'run':>3} {'speedup':>8} {'interval':>18} {'baseline ms':>12} {'candidate ms':>13} contended")
        for i in range(n):
            t = one(tunables)
            lo, hi = t["speedup_ci"]
            points.append(t["speedup"])
            misses += not (lo <= 1.0 <= hi)
            sus = any(str(s).startswith("contended:") for s in t.get("suspicious", []))
            print(f"{i:>3} {t['speedup']:>8.3f} [{lo:>7.3f}, {hi:>7.3f}] {t['baseline_ms']:>12.4f} "
                  f"{t['candidate_ms']:>13.4f} {'yes' if sus else 'no'}", flush=True)
        dev = max(abs(p - 1.0) for p in points)
        print(f"points: median {statistics.median(points):.3f}, min {min(points):.3f}, max {max(points):.3f}, "
              f"largest deviation from 1.0 {dev:.1%}; intervals without 1.0: {misses} of {n}")


if __name__ == "__main__":
    main()
