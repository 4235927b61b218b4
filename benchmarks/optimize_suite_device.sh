#!/bin/bash
# One device call of benchmarks/optimize_suite.py in parallel lanes, after the wheels were
# installed into /tmp/kst-suite (benchmarks/optimize_suite_stage.sh, then one call per
# .gpu/suiteN/part.sh). Usage, in the repository root on the lent machine:
#   bash benchmarks/optimize_suite_device.sh [DEADLINE [STOP]]
# DEADLINE (default 300): seconds after which no task starts. STOP (default 540): then the
# driver gets SIGTERM, ends the lanes (tasks still running are dropped, finished ones kept)
# and prints its report; keep STOP + ~40 s inside the call's limit. Rows accumulate in
# /tmp/kst-rows (one JSON line per task), so a later call on the same warm machine skips
# the tasks done there (or in .gpu/rows/*.jsonl, if carried). Environment: LANES (default
# (CPUs-2)/CPUS_PER_LANE, at most 15), CPUS_PER_LANE (2), EVALS (30), SUITE_ARGS (more
# optimize_suite.py options).
# Into $OUT (4 files): suite-call-<time>.txt (machine, versions, this call's lanes, per-task
# lines and report), report-merged.txt (all rows so far), rows-all.jsonl, lanes-tail.txt.
set -u
deadline=${1:-300}; stop=${2:-540}
cpl=${CPUS_PER_LANE:-2}; evals=${EVALS:-30}
lanes=${LANES:-$(( ($(nproc) - 2) / cpl > 15 ? 15 : ($(nproc) - 2) / cpl ))}
export PYTHONPATH=/tmp/kst-suite:$PWD/src PYTHONUNBUFFERED=1
out=${OUT:-/tmp/kst-out}
mkdir -p /tmp/kst-rows /tmp/kst-runs "$out"
[ -f /tmp/kst-suite/.manifest ] || { echo "no /tmp/kst-suite: run the .gpu/suiteN/part.sh calls first" | tee "$out/suite-call-failed.txt"; exit 1; }
# a machine that went cold lost /tmp: rows brought back earlier can be carried in .gpu/rows
[ -d .gpu/rows ] && cp -n .gpu/rows/*.jsonl /tmp/kst-rows/ 2>/dev/null
prior=(/tmp/kst-rows/*.jsonl)
skip=(); [ -e "${prior[0]}" ] && skip=(--skip-done "${prior[@]}")
{
  echo "# call $(date -u '+%Y-%m-%d %H:%M:%S UTC'): nproc $(nproc), $(grep -c ^processor /proc/cpuinfo) CPUs online; lanes $lanes x $cpl CPUs; deadline ${deadline}s, stop ${stop}s; rows so far: $(cat /tmp/kst-rows/*.jsonl 2>/dev/null | wc -l)"
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node|L3)' | sed 's/^/# lscpu /'
  python3 -c 'import sys, numpy, torch, tvm, xgboost, importlib.metadata as md
ffi = md.version("apache-tvm-ffi")
print(f"# python {sys.version.split()[0]}, numpy {numpy.__version__}, torch {torch.__version__}, tvm {tvm.__version__}, "
      f"apache-tvm-ffi {ffi}, xgboost {xgboost.__version__}, tvm from {tvm.__file__}")'
  timeout -s TERM -k 20 "$stop" python3 benchmarks/optimize_suite.py --lanes "$lanes" --cpus-per-lane "$cpl" \
    --evals "$evals" --deadline "$deadline" "${skip[@]}" --rows-dir /tmp/kst-rows --out-dir /tmp/kst-runs ${SUITE_ARGS:-}
  echo "# exit status: $?"
} > "$out/suite-call-$(date -u +%H%M%S).txt" 2>&1
python3 benchmarks/optimize_suite.py --merge /tmp/kst-rows/*.jsonl --report "$out/report-merged.txt" > /dev/null 2>&1
cat /tmp/kst-rows/*.jsonl > "$out/rows-all.jsonl" 2>/dev/null
for f in $(ls -t /tmp/kst-runs/lane*.log 2>/dev/null | head -n "$lanes"); do echo "== $f"; tail -n 15 "$f"; done > "$out/lanes-tail.txt"
tail -n 30 "$out"/suite-call-*.txt
