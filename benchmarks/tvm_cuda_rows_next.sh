#!/bin/bash
# One device call (nvidia-h200, <= 10 min): the tvm-cuda graph rewrites of the built-in proposer
# (src/kstrata/backends/tvm/graph_rules.py) timed against eager and torch.compile on
# cross_entropy and rmsnorm at their nominal shapes, with benchmarks/tvm_cuda_variants.py --rewrites:
#   cross_entropy  log_softmax_gather: the log-softmax + gather as one row PrimFunc (no B x C
#                  log-softmax written), its default schedule (r0) and its GPU schedule variants
#                  (r1, r2, ...: what the built-in proposer offers first), then the old graph's start;
#   rmsnorm        square: x ** 2 written x * x (no powf per element), the same way.
# Each row: CUDA-graph replay time (median of 30), x start (the unrewritten start), x eager,
# x compile and GB/s (Task.bytes per call); the fastest correct row marked '*'.
#
# Needs TVM in /tmp/kst-tvm (the calls before, on the same warm machine, carrying .gpu/1 then
# .gpu/2: `bash .gpu/N/install-part.sh .gpu/N`, ../shared/gpu/README.md) and carries .gpu/gos
# (benchmarks/gpu_install.sh installs it into /tmp/kst-gos once per machine). In the repository root:
#   bash benchmarks/tvm_cuda_rows_next.sh            (carry [".gpu/gos"])
# Environment: TASKS (cross_entropy,rmsnorm), TASK_SECONDS (140 per task), MAX_VARIANTS (24 per
# graph), REPS (30). Writes $OUT/tvm_cuda_rows_next.txt (the table) when OUT is set.
set -u
cd "$(dirname "$0")/.."
if [ ! -d /tmp/kst-tvm/tvm ]; then
  echo "no TVM in /tmp/kst-tvm: send the .gpu/1 and .gpu/2 calls first (bash .gpu/N/install-part.sh .gpu/N)"
  exit 1
fi
EXTRA_PYTHONPATH=/tmp/kst-tvm . benchmarks/gpu_install.sh || exit 1
# TVM's own apache-tvm-ffi first (as in benchmarks/results/tvm_cuda_variants.txt's command)
export PYTHONPATH=/tmp/kst-tvm:$PWD/src:/tmp/kst-gos
out=${OUT:-/tmp/kst-rows-next}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader 2>/dev/null | sed 's/^/# /'
timeout 560 python3 benchmarks/tvm_cuda_variants.py --rewrites --tasks "${TASKS:-cross_entropy,rmsnorm}" \
  --task-seconds "${TASK_SECONDS:-140}" --max-variants "${MAX_VARIANTS:-24}" --reps "${REPS:-30}" \
  2>&1 | tee "$out/tvm_cuda_rows_next.txt"
exit "${PIPESTATUS[0]}"
