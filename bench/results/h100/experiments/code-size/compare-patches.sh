#!/usr/bin/env bash
# Patches measured against this tree, on one GPU, from the repository root:
#   bash bench/results/h100/experiments/code-size/compare-patches.sh OUT_DIR a.patch b.patch ...
# base: this tree; p1, p2, ...: this tree with one patch each; all: with every patch (when there
# are two or more). measure.sh builds them at once and measures each in turn.
set -uo pipefail
out=$1; shift; here=$(cd "$(dirname "$0")" && pwd)
rm -rf /tmp/cs && mkdir -p /tmp/cs/base
git ls-files 2>/dev/null | grep -q . && git ls-files | tar -cf - -T - | tar -xf - -C /tmp/cs/base ||
  tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C /tmp/cs/base
variants=(base); i=0
for patch in "$@"; do
  i=$((i + 1)); cp -r /tmp/cs/base /tmp/cs/p$i
  (cd /tmp/cs/p$i && git apply "$OLDPWD/$patch") || { echo "PATCH FAILED: $patch"; exit 1; }
  echo "p$i: $patch"; variants+=(p$i)
done
if [ $# -ge 2 ]; then
  cp -r /tmp/cs/base /tmp/cs/all
  for patch in "$@"; do (cd /tmp/cs/all && git apply "$OLDPWD/$patch") || exit 1; done
  variants+=(all)
fi
bash "$here/measure.sh" "$out" "${variants[@]}"
