#!/usr/bin/env bash
# Build both Lambda layers the way `sam build` does (their Makefiles, for CPython 3.13 on arm64) into a
# temporary folder, then check what a function may carry: Lambda's quota is 250 MB unzipped for a
# function's code and all its layers together, and the search function carries both layers.
# A pinned package without an aarch64 wheel fails the build (--only-binary=:all:).
# Needs network access to PyPI; the temporary folder is removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -n "${PIP:-}" ]]; then pip="$PIP"
elif [[ -x .venv/bin/python ]]; then pip="$PWD/.venv/bin/python -m pip"
else pip="python3 -m pip"; fi

dest="$(mktemp -d)"
trap 'rm -rf "$dest"' EXIT
limit_mb=250

for layer in DocIndexLayer:docindex EmbeddingLayer:embedding; do
  name="${layer%%:*}"; folder="layers/${layer##*:}"
  if ! make --no-print-directory -C "$folder" "build-$name" ARTIFACTS_DIR="$dest/$name" PIP="$pip" \
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
if (( total > limit_mb )); then
  echo "FAIL: the search function would carry ${total} MB of ${limit_mb} MB (Lambda's unzipped quota)" >&2
  exit 1
fi
echo "OK: the search function carries ${total} MB of Lambda's ${limit_mb} MB (both layers and its code)"
