#!/usr/bin/env bash
# make check-ocr-arm64: the OCR worker's PP-OCR reading on arm64 (the worker's Fargate tasks run
# ARM64: template.yaml's WorkerArchitecture) gives the text it gives on x86.
# The same pages go through docindex.worker.ocr.process_page (detection, recognition, the reader's
# line logic, the turn: the code a pool process runs) twice in one run: by this venv's Python on x86,
# and by Debian bookworm's aarch64 CPython under qemu-aarch64 with the aarch64 wheels of the worker's
# pins (ONNX Runtime, NumPy, Pillow, tesserocr...). `python -m bench.ocr_engines --arm64` compares them
# page by page and fails beyond its ARM64_TOLERANCE.
# qemu emulates the instructions, not the speed: its seconds are not Graviton's.
#
# Needs qemu-user, and arm64 in dpkg's architectures (as root, once:
#   dpkg --add-architecture arm64 && apt-get update); the .debs are only unpacked into the cache
# (dpkg -x), nothing is installed. PyPI and Debian's mirror are asked on the first run only.
#   QEMU_CPU=neoverse-n1 (default: Graviton2's core: NEON, dot product) or max (also SVE, i8mm, bf16)
#   OCR_ARM64_FILES, OCR_ARM64_DENSE: the pages (default below: ~11 pages, ~1 h under qemu on 1 vCPU)
set -euo pipefail
cd "$(dirname "$0")/.."
python=.venv/bin/python; [[ -x $python ]] || { echo "FAIL: no .venv (make venv)" >&2; exit 1; }
cpu="${QEMU_CPU:-neoverse-n1}"
cache=.cache/ocr-arm64
root="$cache/sysroot"
py=3.11
site="$cache/site-cp${py/./}"
# An upright page of each kind (generated dense A4 letters: OCR_ARM64_DENSE), and pages that take the
# reader's other paths: a quarter turn (Tesseract's OSD), a 204 x 98 fax, a vertical body, a form's labels.
files="${OCR_ARM64_FILES:-rapidocr-japan.jpg,ndl-typewritten-manual-1.png,ndl-kindai-1029114-5-a.jpg,ndl-report-1955-table.jpg,ndl-geppo-2018-1.jpg,upright-notice.tif,rotated90-notice.tif,fax-204x98-notice.tif,vertical-mixed-notice.tif}"
dense="${OCR_ARM64_DENSE:-2}"

command -v qemu-aarch64 >/dev/null || { echo "FAIL: qemu-aarch64 missing (apt-get install qemu-user)" >&2; exit 1; }
mkdir -p "$cache"

# Debian bookworm's CPython for arm64 and the libraries it and the wheels load, unpacked into a sysroot.
if [[ ! -x "$root/usr/bin/python$py" ]]; then
  dpkg --print-foreign-architectures | grep -qx arm64 || {
    echo "FAIL: dpkg has no arm64 architecture (as root: dpkg --add-architecture arm64 && apt-get update)" >&2; exit 1; }
  rm -rf "$cache/debs" "$root"; mkdir -p "$cache/debs" "$root"
  (cd "$cache/debs" && apt-get download \
    "python$py-minimal:arm64" "libpython$py-minimal:arm64" "libpython$py-stdlib:arm64" libc6:arm64 \
    libgcc-s1:arm64 libstdc++6:arm64 libgomp1:arm64 zlib1g:arm64 libexpat1:arm64 libffi8:arm64 libssl3:arm64 \
    libbz2-1.0:arm64 liblzma5:arm64 libuuid1:arm64 libcrypt1:arm64 libtinfo6:arm64 libncursesw6:arm64 \
    libsqlite3-0:arm64 libtirpc3:arm64 libnsl2:arm64 libdb5.3:arm64 libgssapi-krb5-2:arm64 libkrb5-3:arm64 \
    libk5crypto3:arm64 libkrb5support0:arm64 libcom-err2:arm64 libkeyutils1:arm64)
  for deb in "$cache"/debs/*.deb; do dpkg -x "$deb" "$root"; done
fi

# The aarch64 wheels of the layer's and the worker's pins (the constraints resolve them as for the
# image), and the models' wheel without its dependencies, as worker/Dockerfile installs them.
if [[ ! -f "$site/.installed" ]]; then
  rm -rf "$site"
  pip=(-m pip install --quiet --disable-pip-version-check --target "$site" --only-binary=:all:
       --implementation cp --python-version "$py" --platform manylinux2014_aarch64
       --platform manylinux_2_17_aarch64 --platform manylinux_2_28_aarch64)
  python3 "${pip[@]}" -r layers/docindex/requirements.txt -r worker/requirements.txt -c requirements/constraints.txt
  python3 "${pip[@]}" --no-deps -r worker/models.txt
  touch "$site/.installed"
fi

# qemu 7.2 hands the guest the host's /proc/cpuinfo (x86): ONNX Runtime's cpuinfo finds no Arm core
# in it and dies at import (SIGSEGV). qemu looks for the file under -L first: the core's own lines.
# (The instructions the code may use come from qemu's -cpu through the auxiliary vector, not from here.)
case "$cpu" in
  neoverse-n1) part=0xd0c variant=0x3 features="fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs" ;;
  *) part=0xd40 variant=0x1 features="fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm svebf16 i8mm bf16 dgh rng" ;;
esac
mkdir -p "$root/proc"
for ((i = 0; i < $(nproc --all); i++)); do
  printf 'processor\t: %d\nBogoMIPS\t: 243.75\nFeatures\t: %s\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: %s\nCPU part\t: %s\nCPU revision\t: 1\n\n' \
    "$i" "$features" "$variant" "$part"
done >"$root/proc/cpuinfo"

# The aarch64 interpreter bench.ocr_engines runs its child with (it adds docindex and the repo to PYTHONPATH).
wrapper="$cache/python-arm64"
cat >"$wrapper" <<EOF
#!/bin/sh
PYTHONPATH="$PWD/$site\${PYTHONPATH:+:\$PYTHONPATH}" exec qemu-aarch64 -L "$PWD/$root" -cpu $cpu "$PWD/$root/usr/bin/python$py" "\$@"
EOF
chmod +x "$wrapper"
[[ "$("$wrapper" -c 'import platform, onnxruntime; print(platform.machine())')" == aarch64 ]] || {
  echo "FAIL: the aarch64 interpreter does not run ONNX Runtime under qemu ($wrapper)" >&2; exit 1; }

exec "$python" -m bench.ocr_engines --arm64 "$wrapper" --arm64-cpu "$cpu" --corpus real,defects,dense \
  --files "$files" --dense "$dense" --out bench/ocr_arm64.json
