#!/usr/bin/env bash
# The Lambda layer's pinned requirements must resolve to binary wheels for the Lambda runtime
# (CPython 3.13 on arm64, Amazon Linux 2023 / glibc 2.34). An sdist-only dependency would make
# `sam build` compile on the build machine (wrong platform) or fail, so it must not sneak in.
#
# usage: scripts/check_layer_wheels.sh [--strict] [REQUIREMENTS]
#   default   accept the manylinux tags `sam build` accepts for python3.13/arm64:
#             manylinux2014 (= manylinux_2_17), manylinux_2_28 and manylinux_2_34
#   --strict  accept manylinux2014_aarch64 only (the oldest, most portable tag)
# Needs network access to PyPI; downloads into a temporary directory that is removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

platforms=(manylinux2014_aarch64 manylinux_2_28_aarch64 manylinux_2_34_aarch64)
if [[ "${1:-}" == "--strict" ]]; then
  platforms=(manylinux2014_aarch64)
  shift
fi
requirements="${1:-layers/docindex/requirements.txt}"

if [[ -n "${PIP:-}" ]]; then
  read -r -a pip <<<"$PIP"
elif [[ -x .venv/bin/pip ]]; then
  pip=(.venv/bin/pip)
else
  pip=(python3 -m pip)
fi

dest="$(mktemp -d)"
trap 'rm -rf "$dest"' EXIT

platform_args=()
for platform in "${platforms[@]}"; do
  platform_args+=(--platform "$platform")
done

echo "checking $requirements for cp313 wheels on: ${platforms[*]}"
if ! "${pip[@]}" download --quiet --disable-pip-version-check \
    --only-binary=:all: "${platform_args[@]}" --python-version 3.13 --implementation cp \
    -r "$requirements" -d "$dest/wheels" 2>"$dest/pip.log"; then
  grep -v "^WARNING: Location" "$dest/pip.log" >&2 || true
  echo "FAIL: a pinned package (or one of its dependencies) has no wheel for CPython 3.13 / aarch64" >&2
  echo "      on ${platforms[*]} (see pip's message above)" >&2
  exit 1
fi

shopt -s nullglob
wheels=("$dest"/wheels/*.whl)
native=0
for wheel in "${wheels[@]}"; do
  case "$wheel" in
    *-none-any.whl) ;;
    *) native=$((native + 1)); echo "  native: $(basename "$wheel")" ;;
  esac
done
echo "OK: ${#wheels[@]} wheels (${native} native, $(( ${#wheels[@]} - native )) pure Python) resolve for the Lambda runtime"
