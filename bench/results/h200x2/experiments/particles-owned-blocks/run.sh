#!/usr/bin/env bash
# Particles: the baselines' kernels in a dcuda rank's shape (--blocks 264: 264 resident blocks of
# 512 threads, block b owning the segments dcuda's rank b owns) beside the default (a block per
# segment) and dcuda, at 416 and 396 segments per GPU: what the static shares cost without dcuda.
#   OUT=... bash bench/results/h200x2/experiments/particles-owned-blocks/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../../../.." || exit 1
OUT=${OUT:-$PWD/gpu-out}
exec > >(tee "$OUT/particles-owned-blocks.log") 2>&1
nvidia-smi -L
cmake -S . -B build-owned -G Ninja -DCMAKE_BUILD_TYPE=Release -DDCUDA_BUILD_BENCH=OFF \
  -DDCUDA_BUILD_TESTS=OFF >/dev/null &&
  cmake --build build-owned -j 16 --target particles_dcuda particles_nccl particles_mpi \
    >/dev/null || exit 1
run=(mpirun --allow-run-as-root --bind-to none --oversubscribe
     --mca btl_vader_single_copy_mechanism none)
bin=build-owned/apps/particles
small=$(cat apps/particles/small.args)
for count in 1 2; do
  for version in nccl mpi; do
    "${run[@]}" -np "$count" "$bin/particles_$version" $small --check 1 --blocks 12 2>&1 |
      grep "check\|rror"
  done
done
for segments in 416 396; do
  for count in 1 2; do
    echo "== $segments segments, $count GPU(s)"
    "${run[@]}" -np "$count" "$bin/particles_dcuda" --segments "$segments" --check 0 \
      --iterations 50 --phases 1 2>&1 | grep "process 0: phase compute\|ms each\|rror"
    for blocks in 0 264; do
      echo "-- nccl --blocks $blocks"
      "${run[@]}" -np "$count" "$bin/particles_nccl" --segments "$segments" --check 0 \
        --iterations 50 --blocks "$blocks" 2>&1 | grep "ms each\|rror"
    done
  done
done
