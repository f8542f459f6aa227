#!/usr/bin/env bash
# The whole run on a GPU machine, the same on every machine: build, all tests (GPU ones
# included), the GPU tests again under compute-sanitizer (memcheck, racecheck, synccheck,
# initcheck; the multi-GPU suite on 2 emulated nodes where there are 4 GPUs), the example, the
# consumer project and the benchmarks. Logs and benchmark JSON go to $OUT (default ./gpu-out):
#   $OUT/gpu-check.log         everything printed (gpu-check-<part>.log for DCUDA_CHECK_PART=<part>,
#                              so that parts run one after another in one call keep their logs)
#   $OUT/results/<bench>.json  benchmark results (copy them to bench/results/ and commit)
# Usage on a GPU machine: DCUDA_COMMIT=<sha> bash scripts/gpu-check.sh, with the sha taken
# on the submitting machine (the device copy of the tree has no .git).
# DCUDA_CHECK_PART=tests or =bench runs the build and only that half; the default runs both.
# DCUDA_TESTS_REGEX=<regex> gives ctest -R: only the tests it matches, then the sanitizer runs
# (when a full run already passed and only a few tests changed); DCUDA_TESTS_REGEX=none skips
# ctest. DCUDA_SANITIZER_TOOLS="memcheck ..." picks compute-sanitizer's tools (empty: none),
# DCUDA_SANITIZER_SUITES="cases multi" the suites they run over.
# DCUDA_SOAK_ROUNDS=<n> sets the rounds of the GPU soak that follows the sanitizer runs (0: none).
# DCUDA_CHECK_PART=apps runs the case studies alone: their GPU tests (ctest -L apps),
# then apps/run_weak_scaling.py on 1, 2, 4, 8 GPUs (as many as the machine has), JSON in
# $OUT/results/apps (DCUDA_APPS="stencil ..." picks applications, by default every one built;
# DCUDA_APPS_REPEATS the runs, all in one launch), then one process of each under
# compute-sanitizer (DCUDA_APPS_SANITIZERS, default "memcheck racecheck"; empty: none), with
# DCUDA_APPS_SANITIZER_PROCESSES="1 8" also the dcuda versions across 8 GPUs.
# DCUDA_APPS_STEPS picks among "tests scaling sanitizers phases profile" (default the first
# three): on 8 GPUs they take about 300, 420 and 100 s, more than one 10-minute device call;
# "phases" prints where the dcuda ranks' time goes (every application; 1 and all GPUs);
# "profile" runs apps/profile_ncu.sh (Nsight Compute, one GPU, dcuda against MPI-CUDA) into
# $OUT/ncu.tgz.
# DCUDA_BENCH_ONLY="name ..." runs only the benchmarks named (the bench half no longer fits one
# 10-minute device call: run remote_bandwidth in a call of its own); barrier_latency runs on one
# GPU and on all of them (results/barrier-1, results/barrier-<GPUs>); with 3 or more GPUs it also
# runs alltoall_bandwidth on 2, 4 and all of them and remote_latency_far (GPU 0 to the last GPU).
# DCUDA_CHECK_TRACE=1 adds a run of remote_latency with DCUDA_NETWORK_TRACE and prints where the
# network path's time goes (docs/settings.md); its figures are not kept.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT/results"
part="${DCUDA_CHECK_PART:-all}"
log_name=gpu-check.log
[ "$part" = all ] || log_name="gpu-check-$part.log"
exec > >(tee "$OUT/$log_name") 2>&1
export DCUDA_COMMIT="${DCUDA_COMMIT:-unknown}"
status=0
step() { echo; echo "=== $* === ($(date +%T))"; }
# The device tool brings back files at most two folders below $OUT, 8 of them: everything under
# $OUT/results also goes into one archive, $OUT/results.tgz.
finish() {
  step "done"
  tar czf "$OUT/results.tgz" -C "$OUT" results
  echo "gpu-check status: $status (0 = everything passed)"
  exit $status
}

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || status=1
nvcc --version | tail -1

# The multi-GPU suite runs one process per GPU of the machine (2 or more); the benchmarks use 2.
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
multi_gpu_processes=$(( gpus >= 2 ? gpus : 2 ))

step "build"
# The tests take the launcher's options from CMake (scripts/mpi_launcher.sh says which).
source scripts/mpi_launcher.sh
mpi_environment mpiexec
# Every MPI launch of this script: `launch N program args` (the launcher's own options from
# scripts/mpi_launcher.sh, none for MPICH); settings for the processes are exported in a subshell
# around it, since every launcher passes its environment on to the processes on this node.
read -r -a launch_flags <<<"$(mpi_preflags mpiexec)"
launch() { local processes=$1; shift; mpiexec -np "$processes" "${launch_flags[@]}" "$@"; }
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PWD/install" \
  -DMPIEXEC_PREFLAGS="$(mpi_preflags mpiexec)" \
  -DDCUDA_MULTI_GPU_PROCESSES="$multi_gpu_processes" -DDCUDA_WARNINGS_AS_ERRORS=ON ${DCUDA_CMAKE_ARGS:-} \
  >/dev/null && cmake --build build -j "$(nproc)" && cmake --install build >/dev/null || {
  echo "BUILD FAILED"; exit 1; }

if [ "$part" = apps ]; then
  app_steps=" ${DCUDA_APPS_STEPS:-tests scaling sanitizers} "
  if [[ "$app_steps" == *" tests "* ]]; then
    step "case studies: GPU tests (each version against its CPU reference, 1, 2, 4 (8) processes)"
    ctest --test-dir build -L apps --output-on-failure -j 1 || status=1
  fi
  # The applications with at least one program built.
  built_apps() { for dir in build/apps/*/; do
    ls "$dir"*_dcuda "$dir"*_mpi >/dev/null 2>&1 && basename "$dir"; done | grep -v reduction; }
  gpu_counts=""
  for count in 1 2 4 8; do [ "$count" -le "$gpus" ] && gpu_counts="$gpu_counts $count"; done
  if [[ "$app_steps" == *" scaling "* ]]; then
    step "case studies: weak scaling on$gpu_counts GPU(s)"
    python3 apps/run_weak_scaling.py --build build --out "$OUT/results/apps" --gpus $gpu_counts \
      --apps ${DCUDA_APPS:-$(built_apps)} --repeats "${DCUDA_APPS_REPEATS:-5}" || status=1
  fi
  if [[ "$app_steps" == *" phases "* ]]; then
    # Where a dcuda rank's time goes (--phases 1, apps/common/rank_phase_clock.cuh), for the
    # applications that have the option: one GPU (no communication) and every GPU.
    for app in stencil particles spmv power; do
      [ -x "build/apps/$app/${app}_dcuda" ] || continue
      for count in 1 "$gpus"; do
        step "case studies: $app, dcuda, where the ranks' time goes ($count GPU(s))"
        launch "$count" "build/apps/$app/${app}_dcuda" --check 0 --phases 1 || status=1
        [ "$gpus" -gt 1 ] || break
      done
    done
  fi
  if [[ "$app_steps" == *" profile "* ]]; then
    step "case studies: Nsight Compute on one GPU"
    CUDA_VISIBLE_DEVICES=0 bash apps/profile_ncu.sh build "$OUT/ncu" ${DCUDA_APPS:-$(built_apps)} ||
      status=1
    # One archive: the device tool brings back at most 8 files.
    tar czf "$OUT/ncu.tgz" -C "$OUT" ncu && rm -rf "$OUT/ncu"
  fi
  sanitizers="${DCUDA_APPS_SANITIZERS-memcheck racecheck}"
  [[ "$app_steps" == *" sanitizers "* ]] || sanitizers=""
  step "case studies: compute-sanitizer ${sanitizers:-(none)}"
  # Each application's small problem (apps/<app>/small.args) under compute-sanitizer, 3 iterations,
  # two runs (the second from reset state), the dcuda version with 16 ranks per GPU: one process
  # of the dcuda and MPI-CUDA versions, then, for each count of DCUDA_APPS_SANITIZER_PROCESSES
  # above 1 (e.g. "1 8"), the dcuda version across that many GPUs.
  for tool in $sanitizers; do
    for processes in ${DCUDA_APPS_SANITIZER_PROCESSES:-1}; do
      [ "$processes" -le "$gpus" ] || continue
      programs=(build/apps/*/*_dcuda build/apps/*/*_mpi)
      [ "$processes" -gt 1 ] && programs=(build/apps/*/*_dcuda)
      for program in "${programs[@]}"; do
        app=$(basename "$(dirname "$program")")
        [ -f "apps/$app/small.args" ] || continue
        # shellcheck disable=SC2046 # small.args holds the options, split on purpose
        if (export DCUDA_RANKS_PER_DEVICE=16 DCUDA_WAIT_TIMEOUT=120
            launch "$processes" compute-sanitizer --tool "$tool" --error-exitcode 86 \
             "$program" $(cat "apps/$app/small.args") --iterations 3 --warmup 1 --check 1 \
             --runs 2) > "$OUT/sanitizer-app.log" 2>&1 &&
           [ "$(grep -c "check passed" "$OUT/sanitizer-app.log")" -eq 2 ]; then
          echo "$tool PASS $program ($processes process(es))"
          grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer-app.log" | sort | uniq -c
        else
          status=1; echo "$tool FAIL $program ($processes process(es))"
          tail -40 "$OUT/sanitizer-app.log"
        fi
      done
    done
  done
  rm -f "$OUT/sanitizer-app.log"
  finish
fi
# --bind-to none: each process's host proxy spins on a thread of its own (README, "Several GPUs").
if [ "$part" != bench ]; then
step "ctest (CPU and GPU tests, one at a time: GPU tests use the whole GPU)${DCUDA_TESTS_REGEX:+, only those matching $DCUDA_TESTS_REGEX}"
if [ "${DCUDA_TESTS_REGEX:-}" != none ]; then
  ctest --test-dir build --output-on-failure -j 1 ${DCUDA_TESTS_REGEX:+-R "$DCUDA_TESTS_REGEX"} ||
    status=1
fi

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
  puts_switching_window_target_and_size_land_where_each_one_says
  pack_async_and_unpack_async_move_every_typed_byte
  ranks_pack_and_unpack_typed_data_with_all_their_warps
  typed_puts_land_every_byte_in_the_target_layout_and_nothing_else
  stream_ordered_puts_land_between_the_kernels_of_their_stream
  a_put_reads_its_source_after_a_kernel_that_lets_the_next_one_start_early
  back_to_back_puts_into_the_same_bytes_land_in_stream_order
  multi_block_puts_on_several_streams_count_once_after_all_their_bytes
  a_ranks_wait_counts_host_notifications_queued_before_its_run_and_keeps_them_across_runs
  a_stream_wait_after_the_run_counts_the_notifications_ranks_put_into_a_host_window
  thread_scoped_put_notify_delivers_every_size_once
  thread_and_rank_calls_to_one_target_keep_issue_order
)
# compute-sanitizer's tools, each over the cases above and over the multi-GPU suite on both paths
# (DCUDA_SANITIZER_TOOLS picks some: a call of the device tool has room for about two).
# DCUDA_SANITIZER_SUITES="multi" leaves out the single-GPU cases (one GPU's code is the same on
# every machine).
sanitizer_tools="${DCUDA_SANITIZER_TOOLS-memcheck racecheck synccheck initcheck}"
sanitizer_suites=" ${DCUDA_SANITIZER_SUITES:-cases multi} "
case_tools=$sanitizer_tools; [[ "$sanitizer_suites" == *" cases "* ]] || case_tools=""
multi_tools=$sanitizer_tools; [[ "$sanitizer_suites" == *" multi "* ]] || multi_tools=""
for tool in $case_tools; do
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

# Across GPUs: the multi-GPU suite under compute-sanitizer, once per path. memcheck only
# knows memory mapped before a kernel starts, so under memcheck the cases share their window
# memory first (dcuda_host_share_memory; DCUDA_TEST_SHARE_WINDOWS, tests/multi_gpu); racecheck
# runs them as they are, windows mapped while the kernel runs. On one GPU its 2 processes share
# it (DCUDA_TEST_SHARE_GPUS: the peer path through CUDA IPC on one device, kernels time-sliced).
share_gpus=0; [ "$gpus" -ge 2 ] || share_gpus=1
for tool in $multi_tools; do
  share=0; [ "$tool" = memcheck ] && share=1
  for force in 0 1; do
    step "compute-sanitizer --tool $tool, $multi_gpu_processes processes, DCUDA_FORCE_NETWORK=$force, DCUDA_TEST_SHARE_WINDOWS=$share, DCUDA_TEST_SHARE_GPUS=$share_gpus"
    if (export DCUDA_FORCE_NETWORK=$force DCUDA_WAIT_TIMEOUT=300 DCUDA_TEST_SHARE_WINDOWS=$share \
          DCUDA_TEST_SHARE_GPUS=$share_gpus DCUDA_ALLOW_SHARED_GPUS=$share_gpus
        launch "$multi_gpu_processes" \
         compute-sanitizer --tool "$tool" --error-exitcode 86 build/tests/multi_gpu/multi_gpu_tests) \
         > "$OUT/sanitizer-multi.log" 2>&1; then
      echo "$tool PASS multi_gpu_tests (force network $force)"; grep -E "passed|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|INITCHECK SUMMARY" "$OUT/sanitizer-multi.log" | sort | uniq -c
    else
      status=1; echo "$tool FAIL multi_gpu_tests (force network $force)"; tail -60 "$OUT/sanitizer-multi.log"
    fi
  done
done
rm -f "$OUT/sanitizer-multi.log"

# The stream-ordered operations across processes under memcheck, on both paths, every case but
# the one that needs a stream to go on while a kernel of another stream spins: the tools run the
# kernels of different streams one after another.
if [[ " $multi_tools " == *" memcheck "* ]]; then
  for force in 0 1; do
    step "compute-sanitizer --tool memcheck, multi_gpu_stream_tests, $multi_gpu_processes processes, DCUDA_FORCE_NETWORK=$force, DCUDA_TEST_SHARE_GPUS=$share_gpus"
    if (export DCUDA_FORCE_NETWORK=$force DCUDA_WAIT_TIMEOUT=300 DCUDA_TEST_SHARE_GPUS=$share_gpus \
          DCUDA_ALLOW_SHARED_GPUS=$share_gpus
        launch "$multi_gpu_processes" compute-sanitizer --tool memcheck --error-exitcode 86 \
          build/tests/multi_gpu/multi_gpu_stream_tests \
          --except a_ready_stream_put_goes_while_another_stream_of_the_process_is_held) \
        > "$OUT/sanitizer-stream.log" 2>&1; then
      echo "memcheck PASS multi_gpu_stream_tests (force network $force)"; grep -E "passed|ERROR SUMMARY" "$OUT/sanitizer-stream.log" | sort | uniq -c
    else
      status=1; echo "memcheck FAIL multi_gpu_stream_tests (force network $force)"; tail -60 "$OUT/sanitizer-stream.log"
    fi
  done
  rm -f "$OUT/sanitizer-stream.log"
fi

# Several nodes on one machine: the processes split into 2 emulated nodes (DCUDA_EMULATE_NODES),
# which reach each other only through the network path, with MPI itself over TCP between them.
if [ "$gpus" -ge 4 ]; then
  step "multi-GPU suite on 2 emulated nodes of $((gpus / 2)) GPUs"
  (export DCUDA_EMULATE_NODES=2 OMPI_MCA_btl=tcp,self DCUDA_WAIT_TIMEOUT=60
   launch "$gpus" build/tests/multi_gpu/multi_gpu_tests) || status=1
fi

# The GPU soak (tests/multi_gpu/gpu_soak.cu) on each path: random puts, put_notifies and notifies
# between every pair of ranks, every byte and notification checked; it prints its counts and
# PASS or the first failure. DCUDA_SOAK_ROUNDS rounds; on every GPU of the machine, and with 4
# GPUs or more also on 2 of them and once more split into 2 emulated nodes (the network path
# between them, MPI over TCP).
soak_rounds="${DCUDA_SOAK_ROUNDS:-50000}"
run_soak() {  # run_soak PROCESSES VARIABLE=VALUE...: one soak with those settings
  local processes=$1; shift
  step "soak: $processes processes, $soak_rounds rounds, $*"
  (export DCUDA_WAIT_TIMEOUT=60 DCUDA_TEST_SHARE_GPUS=$share_gpus "$@"
   launch "$processes" build/tests/multi_gpu/multi_gpu_soak "$soak_rounds") || status=1
}
if [ "$soak_rounds" != 0 ]; then
  for force in 0 1; do
    run_soak "$multi_gpu_processes" DCUDA_FORCE_NETWORK=$force
    [ "$gpus" -ge 4 ] && run_soak 2 CUDA_VISIBLE_DEVICES=0,1 DCUDA_FORCE_NETWORK=$force
  done
  if [ "$gpus" -ge 4 ]; then
    run_soak "$gpus" DCUDA_EMULATE_NODES=2 OMPI_MCA_btl=tcp,self
  fi
fi

step "example (thesis listings 3.1/3.2) and consumer project"
build/examples/reduction/reduction || status=1
DCUDA_RANKS_PER_DEVICE=5 build/examples/reduction/reduction || status=1
# The work queue across the GPUs of the node (its gets and atomics cross NVLink).
if [ "$gpus" -ge 2 ]; then launch "$multi_gpu_processes" build/examples/work_queue/work_queue || status=1; fi
cmake -S tests/consumer -B build/consumer -G Ninja -DCMAKE_PREFIX_PATH="$PWD/install" >/dev/null && cmake --build build/consumer >/dev/null && build/consumer/consumer || status=1

fi  # tests

if [ "$part" != tests ]; then
step "benchmarks"
only="${DCUDA_BENCH_ONLY:-}"
wanted() { [ -z "$only" ] || [[ " $only " == *" $1 "* ]]; }
for bench in local_latency host_roundtrip local_bandwidth pack_bandwidth; do
  wanted "$bench" || continue
  if [ -x "build/bench/$bench" ]; then
    "build/bench/$bench" --out "$OUT/results" || status=1
  else
    echo "missing benchmark build/bench/$bench"; status=1
  fi
done

if [ "$gpus" -lt 2 ]; then
  # One GPU: the host-initiated benchmarks' same-GPU tables alone, from one process.
  for bench in host_stream_latency host_stream_bandwidth; do
    wanted "$bench" || continue
    step "benchmark $bench (1 process: the same GPU)"
    launch 1 "build/bench/$bench" --out "$OUT/results" || status=1
  done
fi

if [ "$gpus" -ge 2 ]; then
  # The anchors (NVSHMEM, NCCL's device API) first: remote_latency prints their figures beside
  # dcuda's, typed_put_bandwidth those of nvshmem_iput's per-case file (bench/README.md). With
  # DCUDA_BENCH_ONLY name the anchor too ("nvshmem_iput typed_put_bandwidth"): without that file
  # under $OUT/results the program says so and prints no NVSHMEM table.
  for bench in nvshmem_latency nvshmem_iput nccl_latency remote_latency global_access_latency \
      heap_allocation \
      remote_bandwidth typed_put_bandwidth network_engine host_stream_latency \
      host_stream_bandwidth host_stream_concurrency host_stream_network stream_completion_order; do
    wanted "$bench" || continue
    step "benchmark $bench (2 processes)"
    if [ -x "build/bench/$bench" ]; then
      DCUDA_NVSHMEM_RESULT="$OUT/results/nvshmem_latency.json" \
        DCUDA_NCCL_RESULT="$OUT/results/nccl_latency.json" \
        DCUDA_NVSHMEM_IPUT_RESULT="$OUT/results/nvshmem_iput_cases.json" launch 2 \
        "build/bench/$bench" --out "$OUT/results" || status=1
      if [ "$bench" = typed_put_bandwidth ]; then
        # Typed puts across nodes: the same layouts over the network path, against the contiguous
        # put on that path (typed_put_bandwidth_network.json).
        step "benchmark typed_put_bandwidth (2 processes, DCUDA_FORCE_NETWORK=1)"
        DCUDA_FORCE_NETWORK=1 launch 2 "build/bench/$bench" --out "$OUT/results" || status=1
      fi
      if [ "$bench" = remote_latency ] && [ -n "${DCUDA_CHECK_TRACE:-}" ]; then
        # Where the network path's time goes (its last run: notify), in a run of its own: the
        # trace costs about 0.6 us per network operation (experiments/network-trace-cost), so
        # the figures above are measured without it and this run's are discarded.
        step "benchmark remote_latency again, with DCUDA_NETWORK_TRACE (figures discarded)"
        DCUDA_NETWORK_TRACE="$OUT/network-trace" launch 2 \
          "build/bench/$bench" --out "$OUT/traced" > /dev/null || status=1
        python3 scripts/network_trace.py "$OUT/network-trace" || status=1
        rm -rf "$OUT"/network-trace.*.csv "$OUT/traced"
      fi
    else
      echo "not built: build/bench/$bench"
      case "$bench" in nvshmem_latency | nvshmem_iput | nccl_latency) ;; *) status=1 ;; esac
    fi
  done
fi

# What a barrier costs with every resident rank: on one GPU, then across all of them.
if wanted barrier_latency; then
  counts=1
  [ "$gpus" -ge 2 ] && counts="1 $gpus"
  for count in $counts; do
    step "benchmark barrier_latency ($count process(es))"
    launch "$count" build/bench/barrier_latency --out "$OUT/results/barrier-$count" || status=1
  done
fi

# The scaling benchmarks, on every GPU of the machine (3 or more): all-to-all bandwidth with
# every rank sending, and the peer latency between the first and the last GPU (one pair of an
# NVSwitch machine is as far apart as any; CUDA_VISIBLE_DEVICES picks it).
if [ "$gpus" -ge 3 ]; then
  if wanted alltoall_bandwidth; then
    # 2, 4 and every GPU: the same schedule on each count: a scaling curve.
    for count in 2 4 "$gpus"; do
      [ "$count" -le "$gpus" ] && [ ! -d "$OUT/results/alltoall-$count" ] || continue
      step "benchmark alltoall_bandwidth ($count processes)"
      launch "$count" build/bench/alltoall_bandwidth --out "$OUT/results/alltoall-$count" ||
        status=1
    done
  fi
  if wanted remote_latency_far; then
    step "benchmark remote_latency between GPU 0 and GPU $((gpus - 1))"
    CUDA_VISIBLE_DEVICES="0,$((gpus - 1))" launch 2 \
      build/bench/remote_latency --out "$OUT/results/far-pair" || status=1
  fi
fi

# The performance model: fitted from this run's results (then the committed ones of the GPU
# model, for what this run did not measure), then SUMMA's communication against its prediction on
# 1, 2, 4, ... GPUs, device- and host-initiated, each version scored over its GPU counts
# (docs/model.md).
if wanted summa_model; then
  step "performance model: dcuda-model, then summa_model"
  # The committed results' folder prefix of this GPU ("NVIDIA H200" -> h200).
  committed=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 |
    grep -o -i -E '\b[HABLV][0-9]+\b' | head -1 | tr '[:upper:]' '[:lower:]')
  sources=("$OUT/results")
  for folder in "bench/results/${committed}x2/model-validation" "bench/results/${committed}x2" \
      "bench/results/$committed"; do
    [ -n "$committed" ] && [ -d "$folder" ] && sources+=("$folder")
  done
  if tools/dcuda-model "${sources[@]}" --write "$OUT/results/model.txt"; then
    summa_runs=()
    for count in 1 2 4 8; do
      [ "$count" -le "$gpus" ] || continue
      for initiator in device host; do
        folder="$OUT/results/model-validation/$initiator-gpus-$count"
        if launch "$count" build/bench/summa_model --model="$OUT/results/model.txt" \
            --initiator="$initiator" --out "$folder"; then
          summa_runs+=("$folder/summa_model.json")
        else
          status=1
        fi
      done
    done
    if [ ${#summa_runs[@]} -gt 0 ]; then
      python3 bench/plot_model_validation.py "${summa_runs[@]}" \
        --svg "$OUT/results/model-validation/summa.svg" || echo "performance model: targets missed"
    fi
  else
    status=1
  fi
fi

# The MPI engine alone, on the CPU (2 processes, no GPU used).
if wanted engine_backlog; then
  step "benchmark engine_backlog (2 processes, CPU only)"
  launch 2 build/bench/engine_backlog --out "$OUT/results" || status=1
fi

# Every figure of this run against the committed results of the same GPU model
# (bench/regression_guard.py): the WORSE lines and a verdict; the check's status is the tests'.
step "regression guard"
python3 bench/regression_guard.py "$OUT/results" --gpus "$gpus" ||
  echo "regression guard: some figures got worse (above); compare again before calling it a regression"

fi  # bench

finish
