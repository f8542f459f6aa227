#!/usr/bin/env bash
# The dcuda stencil's time per iteration against --step_levels (levels a rank takes through all
# three stages at once; docs/case-studies.md), beside the NCCL-CUDA baseline, on G GPUs:
#   apps/stencil/step_levels_sweep.sh BUILD_DIR GPUS [STEP_LEVELS...] 
# Prints one line per configuration: "<version> step_levels=<n> <ms per iteration>".
set -euo pipefail
build=$1; gpus=$2; shift 2
steps=("${@:-64 32 16 8 4 2 1}")
run() {
  mpirun -np "$gpus" --allow-run-as-root --bind-to none --oversubscribe \
    --mca btl_vader_single_copy_mechanism none "$@" --check 0 --iterations 50 |
    sed -n 's/^RESULT //p' | python3 -c 'import json,sys; r=json.load(sys.stdin);
print("%.3f" % (r["time_ms"] / r["iterations"]))'
}
for program in nccl mpi; do
  [ -x "$build/apps/stencil/stencil_$program" ] &&
    echo "$program - $(run "$build/apps/stencil/stencil_$program")"
done
for levels in ${steps[*]}; do
  echo "dcuda step_levels=$levels $(run "$build/apps/stencil/stencil_dcuda" --step_levels "$levels")"
done
