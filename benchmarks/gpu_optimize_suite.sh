#!/bin/bash
# One device call of benchmarks/gpu_optimize_suite.py on the lent nvidia-h200 (Python 3.12,
# torch 2.11, triton 3.6, no network, kstrata not installed). In the repository root there,
# carrying .gpu/gos (made here by benchmarks/gpu_optimize_suite_stage.sh):
#   KSTRATA_COMMIT=<git sha> bash benchmarks/gpu_optimize_suite.sh [DEADLINE [STOP]]
# 1. installs .gpu/gos (sha256-checked) into /tmp/kst-gos and bubblewrap into /tmp/kst-gos-bw,
#    once per machine (a warm machine that has them skips this);
# 2. runs the suite from src/ (PYTHONPATH=/tmp/kst-gos:$PWD/src), backend triton, EVALS (8)
#    evaluations per task, skipping every task with a row in
#    benchmarks/results/gpu_optimize_suite_rows.jsonl (rows of earlier calls, copied there by
#    the lead; tracked or untracked, the file travels with the tree) or in
#    /tmp/kst-gos-state/rows.jsonl (earlier calls on this warm machine). No task starts after
#    DEADLINE s (default 450) or when it would be expected to end after STOP s (default 540:
#    the median task time of this call, 150 s before one ended); a task still running at STOP
#    is killed without a row (it runs in the next call). Keep STOP + ~40 s inside the call's
#    limit (600 s): the install, the report and the copy-out follow.
# Into $OUT (4 files): rows.jsonl (this call's rows: append them to
# benchmarks/results/gpu_optimize_suite_rows.jsonl before the next call), report.txt (the
# report over all rows so far), call.txt (the whole console output), logs-tail.txt (the last
# lines of each task's log). BACKEND=tilelang-cuda first makes the judge's TileLang environment
# (benchmarks/gpu_tilelang_env.sh: the call before carries .gpu/tlA, this one .gpu/tlB and .gpu/gos).
# Environment: EVALS (8), BACKEND (triton), RERUN (set: skip only this machine's rows, not the
# committed ones), SUITE_ARGS (more options,
# e.g. "--tasks rmsnorm,softmax" or "--final-initial"), KSTRATA_COMMIT (printed in the header:
# the device's copy has no .git; each row also carries a digest of src/kstrata).
set -u
cd "$(dirname "$0")/.."
deadline=${1:-450}
stop=${2:-540}
out=${OUT:-/tmp/kst-gos-out}
mkdir -p "$out" /tmp/kst-gos-state /tmp/kst-gos-logs
export PYTHONUNBUFFERED=1
t0=$(date +%s)
. benchmarks/gpu_install.sh > "$out/call.txt" 2>&1 || { cat "$out/call.txt"; exit 1; }
case "${BACKEND:-triton}" in  # the judge's TileLang environment (wheels carried as .gpu/tlA, .gpu/tlB)
  tilelang*) bash benchmarks/gpu_tilelang_env.sh >> "$out/call.txt" 2>&1 || { cat "$out/call.txt"; exit 1; } ;;
esac
skip=()
committed=benchmarks/results/gpu_optimize_suite_rows.jsonl
[ -n "${RERUN:-}" ] && committed=  # RERUN=1: tasks with a committed row run again (a changed proposer)
for f in $committed /tmp/kst-gos-state/rows.jsonl; do
  [ -s "$f" ] && skip+=("$f")
done
args=(--backend "${BACKEND:-triton}" --evals "${EVALS:-8}" --deadline "$deadline" --stop "$stop"
      --rows "$out/rows.jsonl" --out-dir /tmp/kst-gos-runs --log-dir /tmp/kst-gos-logs --report "$out/report.txt")
[ ${#skip[@]} -gt 0 ] && args+=(--skip-done "${skip[@]}")
{
  echo "# call $(date -u '+%Y-%m-%d %H:%M:%S UTC'); install took $(( $(date +%s) - t0 ))s; rows so far: $(cat "${skip[@]}" /dev/null | wc -l) in ${skip[*]:-nothing}; nproc $(nproc)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
  bwrap --version
  # shellcheck disable=SC2086
  timeout -s TERM -k 20 $((stop + 30)) python3 benchmarks/gpu_optimize_suite.py "${args[@]}" ${SUITE_ARGS:-}
  echo "# exit status $?; call took $(( $(date +%s) - t0 ))s"
} >> "$out/call.txt" 2>&1
[ -f "$out/rows.jsonl" ] && cat "$out/rows.jsonl" >> /tmp/kst-gos-state/rows.jsonl
for f in $(ls -tr /tmp/kst-gos-logs/*.log 2>/dev/null); do echo "== $f"; tail -n 25 "$f"; done > "$out/logs-tail.txt"
tail -n 40 "$out/call.txt"
