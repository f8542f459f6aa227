#!/usr/bin/env bash
# One-off: the GPU tests of the tree, and barrier_latency of the tree against earlier commits'
# own sources (the device barrier read 1.20 us at 8ac1055, 1.61 us at f90c524 and b3f6c6f).
set -u
commits="8ac1055 00f264c 5c07554 f90c524"
for c in $commits; do
  ( mkdir -p build-exp/src-$c && tar xzf build-exp/$c.tgz -C build-exp/src-$c &&
    cmake -S build-exp/src-$c -B build-exp/build-$c -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build build-exp/build-$c --target barrier_latency > "$OUT/build-$c.log" 2>&1 ) &
done
DCUDA_CHECK_PART=tests bash scripts/gpu-check.sh > /dev/null 2>&1; echo "gpu-check rc $?"
grep -E "tests passed|\*\*\*Failed|FAIL|memcheck:|racecheck:|PASS multi|gpu-check status" "$OUT/gpu-check.log" | head -20
echo "skipped: $(grep -c '\*\*\*Skipped' "$OUT/gpu-check.log")"
wait
for round in 1 2; do
  for c in $commits tree; do
    dir=build-exp/build-$c; [ $c = tree ] && dir=build
    printf "%s round %s: " $c $round
    "$dir/bench/barrier_latency" --out "$OUT/b-$c-$round" 2>&1 | grep -E "^0 " | tr '\n' ' '; echo
  done
done
tar czf "$OUT/barrier.tgz" -C "$OUT" $(cd "$OUT" && ls -d b-*) && rm -rf "$OUT"/b-*
