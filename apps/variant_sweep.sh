#!/usr/bin/env bash
# A case study's dcuda version built in other rank shapes, beside its NCCL baseline
# (docs/case-studies.md, "Why dcuda loses"). Each variant is a comma-separated list of the
# program's shape macros, e.g. STENCIL_RANKS_PER_SM=1 or
# PARTICLES_THREADS_PER_RANK=512,PARTICLES_RANKS_PER_SM=1; "default" builds none. Each is built in
# build-variant-<app>-<n>/ and run on 1 GPU and on every GPU with --phases 1 (where its ranks' time
# goes), 50 iterations. DCUDA_RANKS_PER_DEVICE, when set, is passed on.
#   apps/variant_sweep.sh stencil default STENCIL_RANKS_PER_SM=1
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
app=$1; shift
gpus=$(nvidia-smi -L | grep -c '^GPU ')
mpirun_command=(mpirun --allow-run-as-root --bind-to none --oversubscribe
                --mca btl_vader_single_copy_mechanism none -x DCUDA_RANKS_PER_DEVICE)
index=0
for variant in "$@"; do
  flags=""
  definitions=()
  if [ "$variant" != default ]; then
    flags="-D${variant//,/ -D}"
    # Also as CMake variables, for shapes the build itself follows (STENCIL_RANKS_PER_SM).
    IFS=, read -r -a definitions <<< "$variant"
    definitions=("${definitions[@]/#/-D}")
  fi
  (cmake -S . -B "build-variant-$app-$index" -G Ninja -DCMAKE_BUILD_TYPE=Release \
     -DDCUDA_BUILD_BENCH=OFF -DDCUDA_BUILD_TESTS=OFF "-DCMAKE_CUDA_FLAGS=$flags" \
     "${definitions[@]}" >/dev/null &&
   cmake --build "build-variant-$app-$index" -j 16 --target "${app}_dcuda" "${app}_nccl" \
     >/dev/null) &
  index=$((index + 1))
done
wait
status=0
index=0
for variant in "$@"; do
  dir=build-variant-$app-$index
  index=$((index + 1))
  for count in 1 "$gpus"; do
    echo "== $app, $variant, $count GPU(s), DCUDA_RANKS_PER_DEVICE=${DCUDA_RANKS_PER_DEVICE:-default}"
    "${mpirun_command[@]}" -np "$count" "$dir/apps/$app/${app}_dcuda" --check 0 \
      --iterations 50 --phases 1 2>&1 | grep "process 0\|ms each\|rror" || status=1
    "${mpirun_command[@]}" -np "$count" "$dir/apps/$app/${app}_nccl" --check 0 \
      --iterations 50 2>&1 | grep "ms each\|rror" || status=1
    [ "$gpus" -gt 1 ] || break
  done
done
exit $status
