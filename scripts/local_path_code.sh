#!/usr/bin/env bash
# What the local latency path compiles to in a source tree (default: this one):
#   scripts/local_path_code.sh [SOURCE_ROOT]
# compiles bench/probes/local_path_code_probe.cu for sm_90 against SOURCE_ROOT's headers (the
# layouts of every version: include/, include/dcuda/, src/) and prints its instructions, calls,
# local-memory stores (spills) and barriers. Needs nvcc, and nvdisasm on PATH or in
# $CUDA_HOME/bin (docs/performance.md says where to get it without a full toolkit). A tree's
# history can be searched with it under `git bisect run`.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="${1:-$here}"
nvdisasm="$(command -v nvdisasm || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvdisasm")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
includes=(-I"$root/include" -I"$root/src")
[ -d "$root/include/dcuda" ] && includes+=(-I"$root/include/dcuda")
nvcc -arch=sm_90 -cubin -O3 -std=c++20 "${includes[@]}" -o "$work/probe.cubin" \
  "$here/bench/probes/local_path_code_probe.cu"
"$nvdisasm" -c "$work/probe.cubin" > "$work/probe.sass"
printf 'instructions %d, calls %d, local stores %d, barriers %d\n' \
  "$(grep -c ';' "$work/probe.sass")" "$(grep -c 'CALL' "$work/probe.sass")" \
  "$(grep -c 'STL' "$work/probe.sass")" "$(grep -c 'BAR' "$work/probe.sass")"
