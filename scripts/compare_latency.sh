#!/usr/bin/env bash
# Compares the local and peer latency of two builds on one machine in one run, alternating them
# (A B A B ...) so that drift of the machine hits both alike:
#   bash scripts/compare_latency.sh BASE_BIN NEW_BIN OUT [ROUNDS]
# BASE_BIN and NEW_BIN are folders holding local_latency and remote_latency (from build/bench of
# each build); ROUNDS (default 3) runs of each. JSON goes to OUT/<base|new>-<round>/, and
# bench/compare_latency.py prints every row's median per build with its spread (min-max).
# remote_latency needs 2 GPUs; with one it is left out. COMPARE_ONLY=remote_latency (or
# local_latency) runs that benchmark alone.
set -uo pipefail
source "$(dirname "$0")/mpi_launcher.sh"
mpi_environment mpiexec
read -r -a launch_flags <<<"$(mpi_preflags mpiexec)"
base="$1"; new="$2"; out="$3"; rounds="${4:-3}"
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
status=0
for round in $(seq 1 "$rounds"); do
  for build in base new; do
    dir="$base"; [ "$build" = new ] && dir="$new"
    target="$out/$build-$round"; mkdir -p "$target"
    if [ "${COMPARE_ONLY:-local_latency}" = local_latency ]; then
      echo "=== round $round, $build: local_latency"
      "$dir/local_latency" --out "$target" > "$target/local_latency.txt" 2>&1 || status=1
    fi
    if [ "$gpus" -ge 2 ] && [ "${COMPARE_ONLY:-remote_latency}" = remote_latency ]; then
      echo "=== round $round, $build: remote_latency"
      mpiexec -np 2 "${launch_flags[@]}" "$dir/remote_latency" --out "$target" > "$target/remote_latency.txt" 2>&1 || status=1
    fi
  done
done
python3 "$(dirname "$0")/../bench/compare_latency.py" "$out" || status=1
exit $status
