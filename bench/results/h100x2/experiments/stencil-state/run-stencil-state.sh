#!/usr/bin/env bash
# One device call (2 x H100, 2026-11-25), from the repository root, OUT set:
# 1. compare-patches.sh: this tree against it with stencil-rank-state-in-shared.patch (one GPU:
#    latency, all-ranks bandwidth, the four case studies' dcuda versions);
# 2. the patched stencil checked against the CPU reference on 1 and 2 GPUs (16 ranks per GPU, as
#    its GPU test; the run of 2026-11-25 lacked DCUDA_RANKS_PER_DEVICE and did not check, check.log);
# 3. variant_sweep.sh stencil, this tree (default, two ranks per SM) and the patched tree (two
#    ranks per SM), with --phases 1 on 1 and 2 GPUs.
set -uo pipefail
here=bench/results/h100x2/experiments/stencil-state
bash bench/results/h100/experiments/code-size/compare-patches.sh "$OUT/cs" \
  $here/stencil-rank-state-in-shared.patch 2>&1 | tee "$OUT/compare.log"
for n in 1 2; do
  DCUDA_RANKS_PER_DEVICE=16 mpirun --allow-run-as-root --bind-to none -x DCUDA_RANKS_PER_DEVICE \
    -np $n /tmp/cs/p1/build/apps/stencil/stencil_dcuda \
    $(cat apps/stencil/small.args) --check 1 2>&1 | grep -E "check|rror" | tee -a "$OUT/check.log"
done
bash apps/variant_sweep.sh stencil default STENCIL_RANKS_PER_SM=2 2>&1 | tee "$OUT/sweep-base.log"
(cd /tmp/cs/p1 && bash apps/variant_sweep.sh stencil STENCIL_RANKS_PER_SM=2) 2>&1 | tee "$OUT/sweep-patched.log"
cd "$OUT" && tar czf cs.tgz cs && rm -rf cs
