#!/usr/bin/env bash
# Builds the source trees /tmp/cs/<variant> at once, then measures each in turn on one GPU:
# local_latency, local_bandwidth (all ranks) and every case study's dcuda version (5 runs, one
# launch). Used by compare.sh and compare-patches.sh:  measure.sh OUT_DIR variant...
set -uo pipefail
out=$1; shift
mkdir -p "$out"
targets="local_latency local_bandwidth stencil_dcuda particles_dcuda spmv_dcuda power_dcuda"
jobs_each=$(( $(nproc) / $# )); [ "$jobs_each" -ge 1 ] || jobs_each=1
for v in "$@"; do
  (cmake -S /tmp/cs/$v -B /tmp/cs/$v/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDCUDA_BUILD_TESTS=OFF \
     > "$out/build-$v.log" 2>&1 && cmake --build /tmp/cs/$v/build -j "$jobs_each" --target $targets >> "$out/build-$v.log" 2>&1 ||
     echo "BUILD FAILED: $v") &
done
wait
mpirun_one=(mpirun --allow-run-as-root --bind-to none -np 1)
for v in "$@"; do
  b=/tmp/cs/$v/build
  echo "== $v"
  DCUDA_COMMIT=$v "$b/bench/local_latency" --out "$out/$v" | grep "target:"
  DCUDA_COMMIT=$v "$b/bench/local_bandwidth" --out "$out/$v" | grep -E "^(65536|262144|1048576|4194304) " | tail -4
  for app in stencil particles spmv power; do
    "${mpirun_one[@]}" "$b/apps/$app/${app}_dcuda" --check 0 --runs 5 2>&1 | sed -n 's/^RESULT //p' |
      python3 -c 'import json,sys,statistics as s; t=[json.loads(l)["time_ms"]/json.loads(l)["iterations"] for l in sys.stdin]; print("'$app'", "median %.4f ms, runs %s" % (s.median(t), " ".join("%.4f" % x for x in t)))'
  done
done
