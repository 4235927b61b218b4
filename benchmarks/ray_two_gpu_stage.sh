#!/bin/bash
# Stage what benchmarks/ray_two_gpu.py needs on the lent nvidia-h200-x2 (Python 3.12, torch,
# triton, numpy, click, msgpack, protobuf, pyyaml, requests, grpcio there; no network):
# Ray's cp312 manylinux wheel and the dependencies that machine lacks (jsonschema and its
# own), kstrata's dependencies it lacks (pydantic, tenacity, platformdirs, ...) and Debian's
# bubblewrap (the candidate sandbox). One device call carries at most 64 MiB, Ray's wheel
# alone is ~76 MiB: the wheel file itself is split into pieces of at most PIECE_MIB (40),
# one piece per folder .gpu/ray1 .. .gpu/rayN (each at most 60 MiB, checked), the small
# files in the first folder; every folder holds the same MANIFEST (sha256 of each whole file,
# the pieces of the split one) and install.sh.
# On the device, one call per folder, on the same warm machine (what a call writes under /tmp
# stays while the machine is warm), carrying only that folder:  bash .gpu/rayN/install.sh
# Each call stashes its files under /tmp/kst-ray-parts and installs the whole files it can
# (sha256 checked): after .gpu/ray1, kstrata's dependencies (into /tmp/kst-ray) and bubblewrap
# (into /tmp/kst-ray-bw); once every folder came, the joined Ray wheel. Then:
#   export PYTHONPATH=/tmp/kst-ray:$PWD/src PATH=/tmp/kst-ray-bw/usr/bin:$PATH
# (benchmarks/ray_two_gpu.sh does all of this). If the machine went cold, start again.
# Run here, in the repository root (needs the package registry and apt):
#   bash benchmarks/ray_two_gpu_stage.sh
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PY:-python3}
piece_mib=${PIECE_MIB:-40}
dl=.gpu/ray-dl
rm -rf "$dl" .gpu/ray[0-9]*
mkdir -p "$dl"
# exact versions, one of each: pip --target with two versions of a package stops the install
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$dl" ray==2.60.0 jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 \
  rpds-py==2026.9.1 pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 \
  typing-inspection==0.4.5 typing-extensions==4.16.0 tenacity==9.2.1 platformdirs==4.14.9 \
  2>&1 | grep -v "^WARNING: Location" || true
(cd "$dl" && apt-get download -q bubblewrap 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
ray=$(ls "$dl"/ray-2.60.0-cp312-*.whl)
ls "$dl"/bubblewrap_*.deb "$dl"/rpds_py-*cp312*.whl "$dl"/pydantic_core-*cp312*.whl >/dev/null

(cd "$dl" && sha256sum -- *.whl *.deb) | awk '{print "sha256", $1, $2}' > "$dl/MANIFEST"
echo "split $(basename "$ray")" >> "$dl/MANIFEST"
split -b "${piece_mib}M" -d -a 2 "$ray" "$dl/$(basename "$ray").part."
pieces=("$dl/$(basename "$ray")".part.*)
for p in "${pieces[@]}"; do echo "part $(basename "$p")" >> "$dl/MANIFEST"; done
n=${#pieces[@]}
for i in $(seq 1 "$n"); do
  d=.gpu/ray$i
  mkdir -p "$d"
  mv "${pieces[$((i - 1))]}" "$d"/
done
for f in "$dl"/*.whl "$dl"/*.deb; do
  [ "$f" = "$ray" ] && continue
  cp "$f" .gpu/ray1/
  echo "part $(basename "$f")" >> "$dl/MANIFEST"
done
for i in $(seq 1 "$n"); do cp "$dl/MANIFEST" ".gpu/ray$i/MANIFEST"; done

for i in $(seq 1 "$n"); do
  cat > ".gpu/ray$i/install.sh" <<'SH'
#!/bin/bash
# On the device, one call per .gpu/rayN folder (carry only that folder): bash .gpu/rayN/install.sh
# Stashes the folder's files under /tmp/kst-ray-parts, joins a split wheel once all its pieces
# are there, and installs each whole file once (its sha256 checked against MANIFEST): wheels
# into /tmp/kst-ray (pip --target, no index, no deps), bubblewrap into /tmp/kst-ray-bw.
# Folder 1 holds every small file, so after its call kstrata and the sandbox work; Ray works
# once every folder's call ran. Prints what is still missing; exit status 1 on a bad file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
stash=/tmp/kst-ray-parts
mkdir -p "$stash" /tmp/kst-ray/.installed /tmp/kst-ray-bw
find "$here" -maxdepth 1 -type f ! -name install.sh -exec cp {} "$stash"/ \;
cd "$stash"
awk '$1 == "split" {print $2}' MANIFEST | while read -r w; do
  pieces=$(awk -v w="$w" '$1 == "part" && index($2, w ".part.") == 1 {print $2}' MANIFEST)
  if [ ! -f "$w" ] && ls $pieces >/dev/null 2>&1; then cat $pieces > "$w"; rm -f $pieces; fi
done
missing=0
while read -r _ sum f; do
  [ -f "/tmp/kst-ray/.installed/$f" ] && continue
  [ -f "$f" ] || { missing=$((missing + 1)); continue; }
  echo "$sum  $f" | sha256sum -c --quiet
  case "$f" in
    *.whl) python3 -m pip install -q --no-index --no-deps --no-cache-dir --disable-pip-version-check \
             --root-user-action=ignore --upgrade --target /tmp/kst-ray "$f" 2>&1 | { grep -v "^WARNING: Target directory" || true; } ;;
    *.deb) dpkg -x "$f" /tmp/kst-ray-bw ;;
  esac
  touch "/tmp/kst-ray/.installed/$f"
done < <(awk '$1 == "sha256"' MANIFEST)
if [ "$missing" -gt 0 ]; then
  echo "installed $(ls /tmp/kst-ray/.installed | wc -l) files; $missing still missing (the other .gpu/rayN calls)"
else
  PYTHONPATH=/tmp/kst-ray python3 -c 'import sys, ray, jsonschema, pydantic
print("installed in /tmp/kst-ray: python", sys.version.split()[0], "ray", ray.__version__, "pydantic", pydantic.__version__)'
fi
/tmp/kst-ray-bw/usr/bin/bwrap --version
SH
  chmod +x ".gpu/ray$i/install.sh"
done
rm -rf "$dl"
for d in .gpu/ray[0-9]*; do
  size=$(du -sb "$d" | cut -f1)
  echo "$d: $((size >> 20)) MiB, $(ls "$d" | wc -l) files"
  [ "$size" -le $((60 << 20)) ] || { echo "$d is over 60 MiB: lower PIECE_MIB" >&2; exit 1; }
done
