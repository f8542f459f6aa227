#!/usr/bin/env bash
# Nsight Compute profile of case studies on one GPU, to see where dcuda loses:
# the dcuda version's persistent kernel beside the MPI-CUDA version's kernels (one process, so no
# communication: what is left is the computation in a rank's shape against the baseline's grid).
#   apps/profile_ncu.sh <build> <out-dir> <app>...
# For each app it writes <out-dir>/ncu-<app>-{dcuda,mpi}.csv (ncu --csv --page details) and prints
# apps/ncu_summary.py's table: duration, occupancy, registers, spills, throughput, warp stalls.
# The persistent kernel talks to its host proxy while it runs, so ncu cannot save and restore it
# between passes (kernel replay); it reruns the whole program instead (application replay), one
# pass per group of counters, hence the short run (20 iterations). The baselines' kernels are
# replayed one by one: the first 8 launches, two iterations or more of every application.
set -uo pipefail
build=$1 out=$2; shift 2
mkdir -p "$out"
here=$(dirname "$0")
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats
          --section WarpStateStats --section MemoryWorkloadAnalysis)
status=0
for app in "$@"; do
  [ -f "$here/$app/small.args" ] || { echo "profile_ncu: no application '$app'"; status=1; continue; }
  for version in dcuda mpi; do
    program="$build/apps/$app/${app}_$version"
    csv="$out/ncu-$app-$version.csv"
    if [ "$version" = dcuda ]; then
      profile=(--replay-mode application --kernel-name "regex:${app}_kernel" --launch-count 1)
      run_args=(--iterations 20 --warmup 2)
      limit=200
    else
      profile=(--replay-mode kernel --launch-count 8)
      run_args=(--iterations 2 --warmup 0)
      limit=120
    fi
    echo "== ncu: $program"
    if DCUDA_WAIT_TIMEOUT=600 timeout "$limit" ncu --csv --page details "${sections[@]}" \
         "${profile[@]}" --log-file "$csv" "$program" --check 0 "${run_args[@]}" \
         > "$out/ncu-$app-$version.log" 2>&1; then
      python3 "$here/ncu_summary.py" "$csv" || status=1
    else
      status=1; echo "profile_ncu: ncu failed for $program"; tail -20 "$out/ncu-$app-$version.log"
    fi
  done
done
exit $status
