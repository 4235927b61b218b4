#!/bin/bash
# Stage the wheels that benchmarks/optimize_suite.py needs on a lent machine that
# has Python 3.12, torch and numpy but no network and none of kstrata's other
# dependencies. One device call carries at most 64 MiB, so the wheels are split
# into folders .gpu/suite1 .. .gpu/suiteN of at most 58 MiB each (apache-tvm's
# 100 MB wheel in two pieces), each with the same part.sh and MANIFEST.
# On the device, one call per folder (carry that folder only), in any order, on
# the same warm machine:  bash .gpu/suiteN/part.sh
# each stashes its files under /tmp/kst-suite-parts; the call that completes the
# set rebuilds the split wheel, checks every sha256 and installs everything into
# /tmp/kst-suite (pip --target, no index, no deps). Then run with
# PYTHONPATH=/tmp/kst-suite:$PWD/src (benchmarks/optimize_suite_device.sh).
# Run here (needs the package registry):  bash benchmarks/optimize_suite_stage.sh
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PY:-python3}
dl=.gpu/suite-dl
rm -rf "$dl" .gpu/suite[0-9]*
# apache-tvm-ffi 0.1.15.x segfaults in tvm.ir.save_json (MetaSchedule cannot tune): 0.1.14.post1.
# xgboost-cpu provides the xgboost module (MetaSchedule's cost model) at 6 MB instead of 300 MB;
# it needs scipy. torch and numpy (2.5.2 on the lent machine) are left out: they are there.
"$py" -m pip download -q -d "$dl" --python-version 3.12 --implementation cp --only-binary=:all: \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  apache-tvm==0.27.0.post1 apache-tvm-ffi==0.1.14.post1 xgboost-cpu==3.4.1 scipy==1.18.1 \
  typer==0.29.2 rich==15.0.0 pydantic==2.14.4 jinja2==3.1.6 markupsafe==3.0.4 tenacity==9.2.1 \
  psutil==7.2.2 cloudpickle==3.1.3 tornado==6.6.1 ml_dtypes==0.6.0 platformdirs==4.14.8 \
  2>&1 | grep -v "^WARNING: Location" || true
rm -f "$dl"/numpy-*.whl
ls "$dl"/apache_tvm-*.whl "$dl"/xgboost_cpu-*.whl "$dl"/scipy-*.whl >/dev/null

"$py" - "$dl" <<'PY'
import hashlib, os, sys
from pathlib import Path
dl = Path(sys.argv[1]); cap = 58 << 20
wheels = sorted(dl.glob("*.whl"))
big = next(w for w in wheels if w.name.startswith("apache_tvm-"))
data = big.read_bytes(); half = (len(data) + 1) // 2
items = [(f"{big.name}.part.aa", data[:half]), (f"{big.name}.part.ab", data[half:])]
items += [(w.name, w.read_bytes()) for w in wheels if w != big]
bins: list[list] = []
for name, blob in sorted(items, key=lambda it: -len(it[1])):
    b = next((b for b in bins if sum(len(x) for _, x in b) + len(blob) <= cap), None)
    if b is None:
        bins.append(b := [])
    b.append((name, blob))
manifest = [f"split {big.name}"] + [f"part {name}" for name, _ in items]
manifest += [f"sha256 {hashlib.sha256(w.read_bytes()).hexdigest()} {w.name}" for w in wheels]
for i, b in enumerate(bins, 1):
    d = dl.parent / f"suite{i}"
    d.mkdir()
    for name, blob in b:
        (d / name).write_bytes(blob)
    (d / "MANIFEST").write_text("\n".join(manifest) + "\n")
    print(f"{d}: {sum(len(x) for _, x in b) / 2**20:.1f} MiB, {len(b)} files")
PY
for d in .gpu/suite[0-9]*; do
  cat > "$d/part.sh" <<'SH'
#!/bin/bash
# One device call per .gpu/suiteN folder (carry only that folder): bash .gpu/suiteN/part.sh
# Stashes the files under /tmp/kst-suite-parts; once every file in MANIFEST is there, rebuilds
# the split wheel, checks the sha256s and installs all wheels into /tmp/kst-suite.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
stash=/tmp/kst-suite-parts
mkdir -p "$stash"
find "$here" -maxdepth 1 -type f ! -name part.sh -exec cp {} "$stash"/ \;
cd "$stash"
missing=$(awk '$1 == "part" {print $2}' MANIFEST | while read -r f; do [ -f "$f" ] || echo "$f"; done)
if [ -n "$missing" ]; then
  echo "stashed $(basename "$here") in $stash; $(echo "$missing" | wc -l) files of other parts still missing"
  exit 0
fi
if cmp -s MANIFEST /tmp/kst-suite/.manifest 2>/dev/null; then
  echo "/tmp/kst-suite already installed from this MANIFEST"
else
  awk '$1 == "split" {print $2}' MANIFEST | while read -r w; do cat "$w".part.* > "$w"; done
  awk '$1 == "sha256" {print $2 "  " $3}' MANIFEST | sha256sum -c --quiet
  rm -rf /tmp/kst-suite
  python3 -m pip install -q --no-index --no-deps --no-cache-dir --disable-pip-version-check \
    --target /tmp/kst-suite $(awk '$1 == "sha256" {print $3}' MANIFEST)
  cp MANIFEST /tmp/kst-suite/.manifest
fi
PYTHONPATH=/tmp/kst-suite python3 -c 'import sys, numpy, tvm, tvm_ffi, xgboost, scipy, ml_dtypes
from tvm.s_tir import meta_schedule
print("installed in /tmp/kst-suite: python", sys.version.split()[0], "numpy", numpy.__version__, "tvm", tvm.__version__,
      "tvm_ffi", tvm_ffi.__version__, "xgboost", xgboost.__version__, "scipy", scipy.__version__)'
SH
  chmod +x "$d/part.sh"
done
du -sh .gpu/suite[0-9]* && du -sb .gpu/suite[0-9]*
