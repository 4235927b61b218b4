#!/bin/bash
# The TileLang environment of kstrata's judge on the lent nvidia-h200 (no network, kstrata not
# installed), made as the README's "TileLang without network" says, from wheels carried in
# two calls (the 64 MiB limit of one call; /.gpu/ is git-ignored). Here, in the repository root:
#   python -m kstrata setup --download-wheels /tmp/tlw --torch system --python-version 3.12 \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
#     --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
#   mkdir -p .gpu/tlA .gpu/tlB; cp /tmp/tlw/tilelang-*.whl .gpu/tlA/
#   cp /tmp/tlw/*.whl .gpu/tlB/; rm .gpu/tlB/tilelang-*.whl .gpu/tlB/numpy-*.whl   # the image has numpy
# There, two consecutive calls on the same warm machine:
#   carry [".gpu/tlA", ".gpu/gos"]: bash benchmarks/gpu_tilelang_env.sh
#   carry [".gpu/tlB", ".gpu/gos"]: bash benchmarks/gpu_tilelang_env.sh && <the suite, BACKEND=tilelang-cuda>
# Each call copies the wheels it carries into /tmp/kst-wheels; when both parts are there it
# installs .gpu/gos (benchmarks/gpu_install.sh) and runs
# `python3 -m kstrata setup --wheels /tmp/kst-wheels --torch system --skip-main-check` (the
# environment under ~/.cache/kstrata/envs/tilelang sees the image's torch in /opt/torch/.venv; the
# main check is skipped because the image has no TVM, which setup counts as a failure, exit 1).
set -u
cd "$(dirname "$0")/.." || exit 1
mkdir -p /tmp/kst-wheels
for d in .gpu/tlA .gpu/tlB; do if [ -d "$d" ]; then cp "$d"/*.whl /tmp/kst-wheels/ || exit 1; fi; done
ls /tmp/kst-wheels/tilelang-*.whl /tmp/kst-wheels/z3_solver-*.whl >/dev/null 2>&1 || {
  echo "wheels so far: $(ls /tmp/kst-wheels | wc -l) (carry the other part next)"; exit 0; }
. benchmarks/gpu_install.sh || exit 1
python3 -m kstrata setup --wheels /tmp/kst-wheels --torch system --skip-main-check
