#!/bin/bash
# Source this on the lent nvidia-h200 (Python 3.12, torch 2.11, triton 3.6, no network,
# kstrata not installed), in the repository root, carrying .gpu/gos (made here by
# benchmarks/gpu_optimize_suite_stage.sh):
#   . benchmarks/gpu_install.sh
# It checks the sha256s of .gpu/gos, installs its wheels into /tmp/kst-gos and bubblewrap into
# /tmp/kst-gos-bw once per machine (a warm machine that has them skips this), and exports
# PYTHONPATH (those wheels, then ./src) and PATH (bubblewrap last: the image's own first).
# Returns non-zero (and says why) when .gpu/gos is missing or altered.
dep=/tmp/kst-gos
if ! cmp -s .gpu/gos/MANIFEST "$dep/.manifest" 2>/dev/null; then
  if [ ! -f .gpu/gos/MANIFEST ]; then
    echo "no .gpu/gos: run benchmarks/gpu_optimize_suite_stage.sh here and carry .gpu/gos"
    return 1 2>/dev/null || exit 1
  fi
  (cd .gpu/gos && sha256sum -c --quiet MANIFEST) || { echo "bad file in .gpu/gos"; return 1 2>/dev/null || exit 1; }
  rm -rf "$dep" "$dep-bw"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --disable-pip-version-check \
    --root-user-action=ignore --target "$dep" .gpu/gos/*.whl 2>&1 | grep -v "^WARNING: Target directory"
  dpkg -x .gpu/gos/bubblewrap_*.deb "$dep-bw" || { return 1 2>/dev/null || exit 1; }
  cp .gpu/gos/MANIFEST "$dep/.manifest"
fi
# EXTRA_PYTHONPATH: more folders after ./src, e.g. /tmp/kst-tvm (TVM installed by .gpu/N/install-part.sh) for tvm-cuda
export PYTHONPATH=$dep:$PWD/src${EXTRA_PYTHONPATH:+:$EXTRA_PYTHONPATH} PATH=$PATH:$dep-bw/usr/bin PYTHONUNBUFFERED=1
