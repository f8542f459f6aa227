#!/usr/bin/env bash
# Code size experiment (docs/performance.md, "Code size"), on one GPU, from the repository root:
#   bash bench/results/h100/experiments/code-size/compare.sh OLD.tgz OUT_DIR
# v0: OLD.tgz (git archive of the commit before); v1: this tree (the rarely run paths out of
# line); v2: v1 with dcuda_put, dcuda_put_notify and dcuda_win_flush out of line; v3: v2 with
# dcuda_wait_notifications out of line. All built at once, then each measured in turn: the latency
# and bandwidth benchmarks, and every case study's dcuda version (5 runs, one launch).
set -uo pipefail
old=$1; out=$2; here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" /tmp/cs
rm -rf /tmp/cs/v0 /tmp/cs/v1 /tmp/cs/v2 /tmp/cs/v3
mkdir -p /tmp/cs/v0 && tar -xzf "$old" -C /tmp/cs/v0
mkdir -p /tmp/cs/v1 && git ls-files 2>/dev/null | grep -q . && git ls-files | tar -cf - -T - | tar -xf - -C /tmp/cs/v1 ||
  tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C /tmp/cs/v1
cp -r /tmp/cs/v1 /tmp/cs/v2 && (cd /tmp/cs/v2 && bash "$here/v2-puts-out-of-line.sh")
cp -r /tmp/cs/v2 /tmp/cs/v3 && (cd /tmp/cs/v3 && bash "$here/v3-wait-out-of-line.sh")
bash "$here/measure.sh" "$out" v0 v1 v2 v3
