#!/bin/bash
# The two device calls of benchmarks/ray_two_gpu.py on the lent nvidia-h200-x2, after
# benchmarks/ray_two_gpu_stage.sh staged .gpu/ray1 and .gpu/ray2 here. Back to back, on the
# same warm machine (the second reads what the first left under /tmp):
#   1. carry .gpu/ray1:  bash benchmarks/ray_two_gpu.sh local [SECONDS]
#      installs kstrata's dependencies and bubblewrap, stashes Ray's first piece, and runs the
#      bench with --executor local on GPU 0 (one worker, cells one after another);
#   2. carry .gpu/ray2:  bash benchmarks/ray_two_gpu.sh ray [SECONDS [KILL_AFTER]]
#      installs Ray, runs the same cells with --executor ray on both GPUs, SIGKILLs one busy
#      Ray worker after KILL_AFTER (6) finished calls, and prints the report.
# Both benches run the same code: the local call copies src/ and benchmarks/ to /tmp/r2g-code and
# the Ray call runs that copy (the device copies the working tree at each call, and a shared
# checkout can change in between). SECONDS (default 360 / 270) stops the bench cleanly (Ctrl-C): finished cells stay done, and the
# Ray run takes only the tasks the local run finished. TASKS, BUDGET override the defaults.
# Into $OUT: device-MODE.txt, MODE-summary.json, MODE-bench.log, and after the Ray run report.txt.
set -u
cd "$(dirname "$0")/.."
mode=$1
export PYTHONUNBUFFERED=1
out=${OUT:-/tmp/r2g-out}
mkdir -p "$out"
part=.gpu/ray1; [ "$mode" = ray ] && part=.gpu/ray2
bash "$part/install.sh" || exit 1
if [ "$mode" = local ]; then rm -rf /tmp/r2g-code && mkdir -p /tmp/r2g-code && cp -a src benchmarks /tmp/r2g-code/; fi
code=/tmp/r2g-code; [ -d $code/src ] || code=$PWD
echo "kstrata code from $code"
export PYTHONPATH=/tmp/kst-ray:$code/src PATH=/tmp/kst-ray-bw/usr/bin:$PATH
{
  echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), call '$mode'"
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  echo "nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
  bwrap --version
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'
  python3 -c 'from kstrata.sandbox.policy import status; print("sandbox:", status().describe())'
} 2>&1 | tee "$out/device-$mode.txt"
unsafe=""
python3 -c 'from kstrata.sandbox.policy import status; import sys; sys.exit(0 if status().usable else 1)' \
  || unsafe="--unsafe-no-sandbox"
echo "unsafe flag: '${unsafe}'" | tee -a "$out/device-$mode.txt"
tasks=${TASKS:-relu,gelu,silu,sigmoid,softmax,layernorm,rmsnorm,sum_dim}
budget=${BUDGET:-evals=1}
if [ "$mode" = local ]; then
  TRITON_CACHE_DIR=/tmp/r2g-local-triton python3 $code/benchmarks/ray_two_gpu.py run --executor local \
    --gpus 0 --tasks "$tasks" --budget "$budget" --timeout "${2:-360}" --out /tmp/r2g-local $unsafe
else
  if [ -f /tmp/r2g-local/summary.json ]; then  # only the cells the local run finished
    tasks=$(python3 -c 'import json; s = json.load(open("/tmp/r2g-local/summary.json"))
print(",".join(c["task"] for c in s["cells"] if c["status"] == "done"))')
  fi
  TRITON_CACHE_DIR=/tmp/r2g-ray-triton python3 $code/benchmarks/ray_two_gpu.py run --executor ray \
    --tasks "$tasks" --budget "$budget" --timeout "${2:-270}" --kill-after "${3:-6}" --out /tmp/r2g-ray $unsafe
  cp /tmp/r2g-local/summary.json "$out/local-summary.json" 2>/dev/null
  python3 $code/benchmarks/ray_two_gpu.py report /tmp/r2g-local/summary.json /tmp/r2g-ray/summary.json \
    | tee "$out/report.txt"
fi
cp "/tmp/r2g-$mode/summary.json" "$out/$mode-summary.json"
cp "/tmp/r2g-$mode/bench.log" "$out/$mode-bench.log"
tail -n 25 "$out/$mode-bench.log"
