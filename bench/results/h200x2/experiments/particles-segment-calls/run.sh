#!/usr/bin/env bash
# Particles: dcuda's rank_move with the segment's move called once per segment
# (PARTICLES_SEGMENT_CALLS; apply segment-calls.patch to the tree first) against the loop that
# inlines it, at 416 and 396 segments, 1 GPU; the NCCL baseline (a block per segment, and
# --blocks 264) beside them.
set -uo pipefail
cd "$(dirname "$0")/../../../../.." || exit 1
OUT=${OUT:-$PWD/gpu-out}
exec > >(tee "$OUT/particles-segment-calls.log") 2>&1
build() {  # folder, CUDA flags, targets...
  local dir=$1 flags=$2; shift 2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDCUDA_BUILD_BENCH=OFF \
    -DDCUDA_BUILD_TESTS=OFF "-DCMAKE_CUDA_FLAGS=$flags" >/dev/null &&
    cmake --build "$dir" -j 16 --target "$@" >/dev/null
}
build build-owned "" particles_dcuda particles_nccl &
plain=$!
build build-calls -DPARTICLES_SEGMENT_CALLS particles_dcuda &
calls=$!
wait $plain $calls || exit 1
run=(mpirun --allow-run-as-root --bind-to none --oversubscribe
     --mca btl_vader_single_copy_mechanism none)
"${run[@]}" -np 2 build-calls/apps/particles/particles_dcuda $(cat apps/particles/small.args) \
  --check 1 2>&1 | grep "check\|rror"
for segments in 416 396; do
  echo "== $segments segments, 1 GPU"
  for dir in build-owned build-calls; do
    echo "-- $dir"
    "${run[@]}" -np 1 "$dir/apps/particles/particles_dcuda" --segments "$segments" --check 0 \
      --iterations 50 --phases 1 2>&1 | grep "process 0: phase compute\|ms each\|rror"
  done
  for blocks in 0 264; do
    "${run[@]}" -np 1 build-owned/apps/particles/particles_nccl --segments "$segments" \
      --check 0 --iterations 50 --blocks "$blocks" 2>&1 | grep "ms each\|rror"
  done
done
