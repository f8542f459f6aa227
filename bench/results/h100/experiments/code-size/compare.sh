#!/usr/bin/env bash
# Code size experiment (docs/performance.md, "Code size"), on one GPU, from the repository root:
#   bash bench/results/h100/experiments/code-size/compare.sh OLD.tgz OUT_DIR
# v0: OLD.tgz (git archive of the commit before); v1: this tree (the rarely run paths out of
# line); v2: v1 with dcuda_put, dcuda_put_notify and dcuda_win_flush out of line; v3: v2 with
# dcuda_wait_notifications out of line. All built at once, then each measured in turn: the latency
# and bandwidth benchmarks, and every case study's dcuda version (5 runs, one launch).
set -uo pipefail
old=$1; out=$2; here=$(dirname "$0")
mkdir -p "$out" /tmp/cs
rm -rf /tmp/cs/v0 /tmp/cs/v1 /tmp/cs/v2 /tmp/cs/v3
mkdir -p /tmp/cs/v0 && tar -xzf "$old" -C /tmp/cs/v0
mkdir -p /tmp/cs/v1 && git ls-files 2>/dev/null | grep -q . && git ls-files | tar -cf - -T - | tar -xf - -C /tmp/cs/v1 ||
  tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C /tmp/cs/v1
cp -r /tmp/cs/v1 /tmp/cs/v2 && (cd /tmp/cs/v2 && bash "$OLDPWD/$here/v2-puts-out-of-line.sh")
cp -r /tmp/cs/v2 /tmp/cs/v3 && (cd /tmp/cs/v3 && bash "$OLDPWD/$here/v3-wait-out-of-line.sh")
targets="local_latency local_bandwidth stencil_dcuda particles_dcuda spmv_dcuda power_dcuda"
for v in v0 v1 v2 v3; do
  (cmake -S /tmp/cs/$v -B /tmp/cs/$v/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDCUDA_BUILD_TESTS=OFF \
     > "$out/build-$v.log" 2>&1 && cmake --build /tmp/cs/$v/build -j 8 --target $targets >> "$out/build-$v.log" 2>&1 ||
     echo "BUILD FAILED: $v") &
done
wait
mpirun_one=(mpirun --allow-run-as-root --bind-to none -np 1)
for v in v0 v1 v2 v3; do
  b=/tmp/cs/$v/build
  echo "== $v"
  DCUDA_COMMIT=$v "$b/bench/local_latency" --out "$out/$v" | grep "target:"
  DCUDA_COMMIT=$v "$b/bench/local_bandwidth" --out "$out/$v" | grep -E "^(65536|262144|1048576|4194304) " | tail -4
  for app in stencil particles spmv power; do
    "${mpirun_one[@]}" "$b/apps/$app/${app}_dcuda" --check 0 --runs 5 2>&1 | sed -n 's/^RESULT //p' |
      python3 -c 'import json,sys,statistics as s; t=[json.loads(l)["time_ms"]/json.loads(l)["iterations"] for l in sys.stdin]; print("'$app'", "median %.4f ms, runs %s" % (s.median(t), " ".join("%.4f" % x for x in t)))'
  done
done
