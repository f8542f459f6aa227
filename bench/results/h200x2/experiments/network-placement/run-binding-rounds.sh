#!/usr/bin/env bash
# Experiment 2: where the processes run (mpirun binding) against network latency and bandwidth.
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/out}
nvidia-smi topo -m; lscpu | grep -iE 'numa|socket|model name|^cpu\(s\)'
cmake -S new -B new/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDCUDA_BUILD_TESTS=OFF -DDCUDA_BUILD_APPS=OFF \
    -DDCUDA_BUILD_BENCH=ON > /dev/null && cmake --build new/build -j 16 --target remote_latency remote_bandwidth > $OUT/build.log 2>&1 || echo "BUILD FAILED"
mp=(mpirun -np 2 --allow-run-as-root --mca btl_vader_single_copy_mechanism none)
for round in 1 2 3; do
for place in core none local; do
  extra=(); wrap=()
  [ $place = none ] && extra=(--bind-to none)
  [ $place = local ] && { extra=(--bind-to none); wrap=(bash local.sh); }
  echo "=== round $round place=$place latency"
  "${mp[@]}" "${extra[@]}" -x BENCH_MAX_SIZE=4 "${wrap[@]}" new/build/bench/remote_latency --out $OUT/x 2>&1 | awk '/local rank/{print} /^# dcuda/{net=/network path/; what=$4} net && /^[0-9]/{print what, $0} /target: 4 B notified access, network/{print}'
  if [ $round != 3 ]; then
  echo "=== round $round place=$place bandwidth"
  "${mp[@]}" "${extra[@]}" "${wrap[@]}" new/build/bench/remote_bandwidth --path=network --senders=one --sizes=1048576,4194304 --out $OUT/x 2>&1 | grep -E '^[0-9]'
  fi
done
done
