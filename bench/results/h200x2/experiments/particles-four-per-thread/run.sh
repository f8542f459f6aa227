#!/usr/bin/env bash
# Particles: two particles per thread in 512-thread blocks (the default until this experiment)
# against four per thread in 256-thread blocks, dcuda and both baselines alike; checks on the
# small problem, then 50 timed iterations at the default size on 1 and 2 GPUs.
#   OUT=... bash bench/results/h200x2/experiments/particles-four-per-thread/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../../../.." || exit 1
OUT=${OUT:-$PWD/gpu-out}
exec > >(tee "$OUT/particles-four-per-thread.log") 2>&1
gpus=$(nvidia-smi -L | grep -c '^GPU ')
nvidia-smi -L
configure() {  # build folder, CUDA flags
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDCUDA_BUILD_BENCH=OFF \
    -DDCUDA_BUILD_TESTS=OFF "-DCMAKE_CUDA_FLAGS=$2" >/dev/null &&
    cmake --build "$1" -j 8 --target particles_dcuda particles_nccl particles_mpi >/dev/null
}
configure build-two "" &
two=$!
configure build-four "-DPARTICLES_PER_THREAD=4 -DPARTICLES_THREADS_PER_RANK=256" &
four=$!
# By PID: a plain `wait` (bash 5.1+) would also wait for the tee above, which never ends.
wait $two $four
run=(mpirun --allow-run-as-root --bind-to none --oversubscribe
     --mca btl_vader_single_copy_mechanism none)
small=$(cat apps/particles/small.args)
for shape in two:512 four:256; do
  dir=build-${shape%:*}; threads=${shape#*:}
  for count in 1 "$gpus"; do
    echo "== check, $dir, $count GPU(s)"
    for version in dcuda mpi nccl; do
      "${run[@]}" -np "$count" "$dir/apps/particles/particles_$version" $small --check 1 \
        --threads "$threads" 2>&1 | grep "check\|rror"
    done
  done
done
for count in 1 "$gpus"; do
  for shape in two:512 four:256; do
    dir=build-${shape%:*}; threads=${shape#*:}
    echo "== time, $dir, $count GPU(s)"
    "${run[@]}" -np "$count" "$dir/apps/particles/particles_dcuda" --check 0 --iterations 50 \
      --phases 1 2>&1 | grep "process 0\|ms each\|rror"
    for version in nccl mpi; do
      "${run[@]}" -np "$count" "$dir/apps/particles/particles_$version" --check 0 \
        --iterations 50 --threads "$threads" 2>&1 | grep "ms each\|rror"
    done
  done
done
