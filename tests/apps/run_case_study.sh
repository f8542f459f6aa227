#!/usr/bin/env bash
# A case study's GPU test: run_case_study.sh PROCESSES PROGRAM [ARGS...] runs PROGRAM under the MPI
# launcher that CMake was configured with (MPIEXEC, MPIEXEC_NUMPROC_FLAG, MPIEXEC_PREFLAGS and
# MPIEXEC_POSTFLAGS in the environment; mpirun -np by default) with PROCESSES processes and passes when every run it was asked for (ARGS' --runs, default 1)
# reports a passed result check. Without a GPU, or with fewer GPUs than processes, it prints
# "SKIP: <why>" (CTest reports it skipped).
set -uo pipefail
processes=$1; shift
program=$1
runs=1
previous=""
for argument in "$@"; do
  [ "$previous" = --runs ] && runs=$argument
  previous=$argument
done
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "${gpus:-0}" -eq 0 ]; then
  echo "SKIP: $(basename "$program"): no GPU found (nvidia-smi -L lists none)"; exit 0
fi
# NCCL and the dcuda runtime (unless DCUDA_DEVICE says otherwise) take one GPU per process.
if [ "$gpus" -lt "$processes" ]; then
  echo "SKIP: $(basename "$program"): one GPU per process: $processes processes, $gpus GPU(s)"
  exit 0
fi
# The processes get this environment (DCUDA_RANKS_PER_DEVICE, ...) from the launcher.
read -r -a preflags <<<"${MPIEXEC_PREFLAGS:-}"
read -r -a postflags <<<"${MPIEXEC_POSTFLAGS:-}"
output=$("${MPIEXEC:-mpirun}" "${MPIEXEC_NUMPROC_FLAG:--np}" "$processes" "${preflags[@]}" \
           "$program" "${postflags[@]}" "${@:2}" 2>&1)
status=$?
echo "$output"
if [ $status -ne 0 ]; then echo "FAIL: exit status $status"; exit 1; fi
passed=$(grep -c '^RESULT .*"check": "passed"' <<<"$output")
results=$(grep -c '^RESULT ' <<<"$output")
if [ "$passed" -ne "$runs" ] || [ "$results" -ne "$runs" ]; then
  echo "FAIL: $runs run(s) asked for, $results RESULT line(s), $passed with a passed check"; exit 1
fi
echo "PASS: $(basename "$program") on $processes process(es): each of $runs run(s) matches the CPU reference"
