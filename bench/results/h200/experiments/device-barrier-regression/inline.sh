#!/usr/bin/env bash
# One-off: node_world_barrier inline again (the tree) against 28a8cec (noinline): GPU tests of
# the tree, then barrier_latency, local_bandwidth and local_latency of both, alternated.
set -u
( mkdir -p build-exp/src-base && tar xzf build-exp/28a8cec.tgz -C build-exp/src-base &&
  cmake -S build-exp/src-base -B build-exp/build-base -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build build-exp/build-base --target barrier_latency local_bandwidth local_latency > "$OUT/build-base.log" 2>&1 ) &
DCUDA_CHECK_PART=tests bash scripts/gpu-check.sh > /dev/null 2>&1; echo "gpu-check rc $?"
grep -E "tests passed|\*\*\*Failed|FAIL|memcheck:|racecheck:|PASS multi|gpu-check status" "$OUT/gpu-check.log" | head -20
echo "skipped: $(grep -c '\*\*\*Skipped' "$OUT/gpu-check.log")"
wait
for round in 1 2; do
  for which in base tree; do
    dir=build-exp/build-base; [ $which = tree ] && dir=build
    echo "== $which round $round"
    "$dir/bench/barrier_latency" --out "$OUT/$which-$round" 2>&1 | grep -E "^0 "
    "$dir/bench/local_bandwidth" --out "$OUT/$which-$round" 2>&1 | grep -E "^(65536|1048576) "
    "$dir/bench/local_latency" --out "$OUT/$which-$round" 2>&1 | grep -E "^# target"
  done
done
tar czf "$OUT/inline.tgz" -C "$OUT" base-1 base-2 tree-1 tree-2 && rm -rf "$OUT"/base-? "$OUT"/tree-?
