#!/usr/bin/env bash
# Experiment: network path latency/bandwidth, base (7401133) vs new (small landings etc.),
# mpirun default binding vs --bind-to none.
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/out}
build() {
  cmake -S $1 -B $1/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDCUDA_BUILD_TESTS=OFF -DDCUDA_BUILD_APPS=OFF \
    -DDCUDA_BUILD_BENCH=ON > /dev/null && cmake --build $1/build -j 8 --target remote_latency remote_bandwidth > $OUT/build-$1.log 2>&1 || echo "BUILD $1 FAILED"
}
build base & build new & wait
tail -2 $OUT/build-*.log
mp=(mpirun -np 2 --allow-run-as-root --mca btl_vader_single_copy_mechanism none)
for t in base new; do
  for bind in core none; do
    extra=(); [ $bind = none ] && extra=(--bind-to none)
    echo "=== $t bind=$bind latency"
    "${mp[@]}" "${extra[@]}" --report-bindings -x BENCH_MAX_SIZE=16 $t/build/bench/remote_latency --out $OUT/r-$t-$bind 2>&1 | grep -v '^#\s*$' | grep -E 'bound|^[0-9]|target|# dcuda|ranks:' 
    echo "=== $t bind=$bind bandwidth"
    "${mp[@]}" "${extra[@]}" $t/build/bench/remote_bandwidth --path=network --senders=one --sizes=262144,1048576,2097152,4194304 --out $OUT/r-$t-$bind 2>&1 | grep -E '^[0-9]|target|# dcuda'
  done
done
