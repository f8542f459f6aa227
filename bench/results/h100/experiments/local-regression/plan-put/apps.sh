#!/usr/bin/env bash
# One-off: the case studies on this GPU, the working tree against HEAD's sources (old.tgz, dcuda
# versions only), in one call.
set -u
mkdir -p build-exp/old-src && tar xzf build-exp/old.tgz -C build-exp/old-src
( cmake -S build-exp/old-src -B build-exp/old-build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build build-exp/old-build --target stencil_dcuda particles_dcuda spmv_dcuda power_dcuda > "$OUT/old-build.log" 2>&1 ) &
DCUDA_CHECK_PART=apps DCUDA_APPS_STEPS="tests scaling" bash scripts/gpu-check.sh > /dev/null 2>&1; echo "gpu-check rc $?"
grep -E "tests passed|tests failed|\*\*\*Failed|FAIL|^# GPUs|^1 " "$OUT/gpu-check.log" | head -40
wait
python3 apps/run_weak_scaling.py --build build-exp/old-build --out "$OUT/old-apps" --gpus 1 --repeats 5 \
  --apps stencil particles spmv power 2>&1 | grep -E "^# GPUs|^1 |^#.*(app|stencil|particles|spmv|power)"
tar czf "$OUT/old-apps.tgz" -C "$OUT" old-apps && rm -rf "$OUT/old-apps"
