#!/usr/bin/env bash
# One-off: HEAD's sources (old.tgz) against the working tree: tests of the tree, then the local
# benchmarks of both, alternated; cuobjdump and the tree's SASS come back too.
set -u
mkdir -p build-exp/old-src && tar xzf build-exp/old.tgz -C build-exp/old-src
( cmake -S build-exp/old-src -B build-exp/old-build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build build-exp/old-build --target local_bandwidth local_latency > "$OUT/old-build.log" 2>&1 ) &
DCUDA_CHECK_PART=${PART:-tests} bash scripts/gpu-check.sh > /dev/null 2>&1; echo "gpu-check rc $?"
grep -E "tests passed|Skipped|Failed|FAIL" "$OUT/gpu-check.log" | grep -vc Skipped
grep -E "tests passed|tests failed|\*\*\*Failed|FAIL" "$OUT/gpu-check.log" | head -20
wait
bench() { "$1/bench/$2" --out "$OUT/$3" 2>&1 | grep -E "^(# target|# dcuda|4 |0 |65536 |262144 |1048576 |4194304 )" ; }
for round in 1 2; do
  for which in new old; do
    dir=build; [ $which = old ] && dir=build-exp/old-build
    echo "== $which round $round"
    bench $dir local_bandwidth $which-$round
    bench $dir local_latency $which-$round
  done
done
mkdir -p "$OUT/sass"
cuobjdump -sass build/bench/local_bandwidth > "$OUT/sass/local_bandwidth.sass"
cuobjdump -sass build/bench/local_latency > "$OUT/sass/local_latency.sass"
(cd / && tar czf "$OUT/tools.tgz" usr/local/cuda/bin/cuobjdump usr/local/cuda/bin/nvdisasm)
tar czf "$OUT/sass.tgz" -C "$OUT" sass && rm -rf "$OUT/sass"
tar czf "$OUT/bench.tgz" -C "$OUT" new-1 new-2 old-1 old-2 && rm -rf "$OUT"/new-? "$OUT"/old-?
