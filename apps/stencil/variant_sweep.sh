#!/usr/bin/env bash
# The dcuda stencil with 1, 2, ... ranks per SM (docs/case-studies.md, "Why dcuda loses"): for
# each count given, builds stencil_dcuda with -DSTENCIL_RANKS_PER_SM=<count> (the registers
# __launch_bounds__ leaves a thread) in build-variant-<count>/ and runs it on 1 and 4 GPUs (as
# many as there are) with --phases 1 (where its ranks' time goes), beside the NCCL baseline.
# DCUDA_RANKS_PER_DEVICE, when set, is passed on.
#   apps/stencil/variant_sweep.sh 1 2
set -uo pipefail
cd "$(dirname "$0")/../.."
gpus=$(nvidia-smi -L | grep -c '^GPU ')
mpirun_command=(mpirun --allow-run-as-root --bind-to none --oversubscribe
                --mca btl_vader_single_copy_mechanism none -x DCUDA_RANKS_PER_DEVICE)
for variant in "$@"; do
  dir=build-variant-$variant
  (cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDCUDA_BUILD_BENCH=OFF \
     -DDCUDA_BUILD_TESTS=OFF \
     "-DCMAKE_CUDA_FLAGS=-DSTENCIL_RANKS_PER_SM=$variant" >/dev/null &&
   cmake --build "$dir" -j 16 --target stencil_dcuda stencil_nccl >/dev/null) &
done
wait
for variant in "$@"; do
  dir=build-variant-$variant
  for count in 1 4; do
    [ "$count" -le "$gpus" ] || continue
    echo "== ranks per SM $variant, $count GPU(s), DCUDA_RANKS_PER_DEVICE=${DCUDA_RANKS_PER_DEVICE:-default}"
    "${mpirun_command[@]}" -np "$count" "$dir/apps/stencil/stencil_dcuda" --check 0 \
      --iterations 50 --phases 1 2>&1 | grep "process 0\|ms each\|rror"
    "${mpirun_command[@]}" -np "$count" "$dir/apps/stencil/stencil_nccl" --check 0 \
      --iterations 50 2>&1 | grep "ms each\|rror"
  done
done
