#!/usr/bin/env bash
# Particles: does the work of an SM decide a rank's time? The hardware puts blocks b and b + R/2
# on one SM; by default they own shares of equal size (2 + 2 or 1 + 1 segments at 416 segments
# over 264 ranks). interleave.patch (RANK_LINE_INTERLEAVE) puts them next to each other in the
# line, so that an SM holds 3 or 4 segments (416) or exactly 3 (396). 
#   OUT=... bash bench/results/h200x2/experiments/particles-sm-pairs/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../../../.." || exit 1
here=bench/results/h200x2/experiments/particles-sm-pairs
OUT=${OUT:-$PWD/gpu-out}
exec > >(tee "$OUT/particles-sm-pairs.log") 2>&1
build() {  # folder, CUDA flags, targets...
  local dir=$1 flags=$2; shift 2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDCUDA_BUILD_BENCH=OFF \
    -DDCUDA_BUILD_TESTS=OFF "-DCMAKE_CUDA_FLAGS=$flags" >/dev/null &&
    cmake --build "$dir" -j 16 --target "$@" >/dev/null
}
build build-plain "" particles_dcuda particles_nccl &
plain=$!
mkdir -p /tmp/inter && cp -r CMakeLists.txt cmake src include apps /tmp/inter/ 2>/dev/null
(cd /tmp/inter && patch -p1 < "$OLDPWD/$here/interleave.patch" >/dev/null &&
   build build-inter -DRANK_LINE_INTERLEAVE particles_dcuda) &
inter=$!
wait $plain $inter || exit 1
run=(mpirun --allow-run-as-root --bind-to none --oversubscribe
     --mca btl_vader_single_copy_mechanism none)
"${run[@]}" -np 2 /tmp/inter/build-inter/apps/particles/particles_dcuda $(cat apps/particles/small.args) \
  --check 1 2>&1 | grep "check\|rror"
for segments in 416 396; do
  for count in 1 2; do
    echo "== $segments segments, $count GPU(s)"
    for dir in build-plain /tmp/inter/build-inter; do
      echo "-- $dir"
      "${run[@]}" -np "$count" "$dir/apps/particles/particles_dcuda" --segments "$segments" \
        --check 0 --iterations 50 --phases 1 2>&1 | grep "process 0: phase compute\|ms each\|rror"
    done
    "${run[@]}" -np "$count" build-plain/apps/particles/particles_nccl --segments "$segments" \
      --check 0 --iterations 50 2>&1 | grep "ms each\|rror"
  done
done
