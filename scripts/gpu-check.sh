#!/usr/bin/env bash
# The whole device run, the same in every session: build, all tests (GPU ones included), the GPU
# tests again under compute-sanitizer (memcheck, racecheck), the example, the consumer project
# and the benchmarks. Logs and benchmark JSON go to $OUT (default ./gpu-out):
#   $OUT/gpu-check.log         everything printed
#   $OUT/results/<bench>.json  benchmark results (copy them to bench/results/ and commit)
# Usage on a lent GPU machine: DCUDA_COMMIT=<sha> bash scripts/gpu-check.sh, with the sha taken
# on the submitting machine (the device copy of the tree has no .git).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT/results"
exec > >(tee "$OUT/gpu-check.log") 2>&1
export DCUDA_COMMIT="${DCUDA_COMMIT:-unknown}"
status=0
step() { echo; echo "=== $* ==="; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || status=1
nvcc --version | tail -1

step "build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PWD/install" ${DCUDA_CMAKE_ARGS:-} \
  >/dev/null && cmake --build build -j "$(nproc)" && cmake --install build >/dev/null || {
  echo "BUILD FAILED"; exit 1; }

step "ctest (CPU and GPU tests, one at a time: GPU tests use the whole GPU)"
ctest --test-dir build --output-on-failure -j 1 || status=1

sanitized_cases=(
  rank_info_and_communicators_describe_the_launch
  put_notify_delivers_every_byte_around_the_ring
  puts_and_notifies_to_one_target_arrive_in_issue_order
  overlapping_windows_deliver_in_place
  test_notifications_consumes_only_when_enough_are_there
  barrier_releases_no_rank_early
  cpu_timers_measure_each_timed_region
  host_run_can_be_called_again
  largest_rank_count_the_gpu_allows_runs
  barrier_makes_plain_writes_visible
  window_slots_run_out_at_32_and_are_reused
)
for tool in memcheck racecheck; do
  step "compute-sanitizer --tool $tool"
  passed=0; failed=0
  for case in "${sanitized_cases[@]}"; do
    if DCUDA_WAIT_TIMEOUT=300 compute-sanitizer --tool "$tool" --error-exitcode 86 \
         build/tests/gpu/gpu_tests --case "$case" > "$OUT/sanitizer-case.log" 2>&1; then
      passed=$((passed + 1)); echo "$tool PASS $case"
    else
      failed=$((failed + 1)); status=1; echo "$tool FAIL $case"; tail -40 "$OUT/sanitizer-case.log"
    fi
  done
  echo "$tool: $passed passed, $failed failed"
done
rm -f "$OUT/sanitizer-case.log"

step "example (thesis listings 3.1/3.2) and consumer project"
build/apps/reduction/reduction || status=1
DCUDA_RANKS_PER_DEVICE=5 build/apps/reduction/reduction || status=1
cmake -S tests/consumer -B build/consumer -G Ninja -DCMAKE_PREFIX_PATH="$PWD/install" >/dev/null && cmake --build build/consumer >/dev/null && build/consumer/consumer || status=1

step "benchmarks"
for bench in local_latency host_roundtrip local_bandwidth; do
  if [ -x "build/bench/$bench" ]; then
    "build/bench/$bench" --out "$OUT/results" || status=1
  else
    echo "missing benchmark build/bench/$bench"; status=1
  fi
done

step "done"
echo "gpu-check status: $status (0 = everything passed)"
exit $status
