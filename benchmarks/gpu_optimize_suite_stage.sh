#!/bin/bash
# Stage what benchmarks/gpu_optimize_suite.py needs on the lent nvidia-h200 and its image
# lacks. That image (../.library/device/KINDS.md's package list, read 2026-11-17) has Python
# 3.12, torch 2.11, triton 3.6, numpy, rich, psutil, jinja2, typer, cloudpickle and ml-dtypes;
# of kstrata's dependencies it lacks pydantic (and pydantic-core, annotated-types,
# typing-inspection; typing-extensions is carried at the version pydantic-core wants),
# platformdirs and tenacity, the same set benchmarks/ray_two_gpu_stage.sh carried for the
# H200 x2 runs, plus Debian's bubblewrap (the candidate sandbox; kstrata refuses to run
# candidates without it). TVM and TileLang are not staged (--backend triton only; see
# benchmarks/optimize_suite_stage.sh and `kstrata setup --wheels` for those).
# Result: one folder .gpu/gos (~4 MiB; /.gpu/ is git-ignored) with the wheels, the .deb and a
# MANIFEST of their sha256s. Carry it in EVERY call (it is small, and a machine that went cold
# between calls starts bare): benchmarks/gpu_optimize_suite.sh checks the sha256s and installs it
# into /tmp/kst-gos once per machine (pip --target, no index, no deps; the .deb unpacked into
# /tmp/kst-gos-bw), and skips that on a warm machine that has it already.
# Run here, in the repository root (needs the package registry and apt):
#   bash benchmarks/gpu_optimize_suite_stage.sh
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PY:-python3}
pyver=${PYVER:-3.12}  # the device's; PYVER=3.11 stages for a local test of gpu_optimize_suite.sh here
d=.gpu/gos
rm -rf "$d"
mkdir -p "$d"
# exact versions, one of each: pip --target with two versions of a package stops the install
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$d" pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 \
  typing-extensions==4.16.0 platformdirs==4.14.9 tenacity==9.2.1 \
  2>&1 | grep -v "^WARNING: Location" || true
(cd "$d" && apt-get download -q bubblewrap 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
ls "$d"/pydantic_core-*cp${pyver/./}*.whl "$d"/pydantic-*.whl "$d"/bubblewrap_*.deb >/dev/null
(cd "$d" && sha256sum -- *.whl *.deb) > "$d/MANIFEST"
size=$(du -sb "$d" | cut -f1)
echo "$d: $((size >> 10)) KiB, $(($(ls "$d" | wc -l) - 1)) files:"
cat "$d/MANIFEST"
[ "$size" -le $((32 << 20)) ] || { echo "$d is over 32 MiB" >&2; exit 1; }
