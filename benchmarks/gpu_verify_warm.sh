#!/bin/bash
# Verification time per task on the lent nvidia-h200 with warm loads on and off (issue #18 item 5;
# kstrata.verify.warm_loads), plus the Triton sanity of this round's sandbox on a GPU. Run in the
# repository root (or a copy of a commit's src/ and benchmarks/), after benchmarks/gpu_tilelang_env.sh
# made the judge's TileLang environment, carrying .gpu/gos:
#   OUT=dir [RUNS="triton tilelang_warm tilelang_off"] bash benchmarks/gpu_verify_warm.sh [TASKS]
# RUNS picks which of the three runs below happen (default all three).
# Each run has its own KSTRATA_CACHE_DIR, so no run finds another's kernel-cache archive (a cold
# verification each: a candidate's first).
set -u
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-/tmp/kst-warm-out}
tasks=${1:-relu,softmax,rmsnorm}
mkdir -p "$out"
. benchmarks/gpu_install.sh || exit 1
runs=" ${RUNS:-triton tilelang_warm tilelang_off} "
run() {  # name, env assignments..., then verify_overhead's arguments after --
  local name=$1; shift
  case "$runs" in *" $name "*) ;; *) return 0 ;; esac
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  rm -rf "/tmp/kst-cache-$name"
  env KSTRATA_CACHE_DIR="/tmp/kst-cache-$name" "${envs[@]}" python3 benchmarks/verify_overhead.py "$@" \
    > "$out/$name.txt" 2>&1
  echo "== $name ($(date -u +%H:%M:%S))"; grep -v "INFO\|^\[" "$out/$name.txt" | tail -n 8
}
run triton KSTRATA_VERIFY_WARM_PROCS=0 -- --backend triton --tasks rmsnorm,softmax,cross_entropy
run tilelang_warm KSTRATA_VERIFY_WARM_PROCS=7 -- --backend tilelang-cuda --tasks "$tasks"
run tilelang_off KSTRATA_VERIFY_WARM_PROCS=0 -- --backend tilelang-cuda --tasks "$tasks"
