#!/usr/bin/env bash
# Runs every test: builds first (scripts/install.sh, incremental), then CTest. CPU tests run
# everywhere; GPU tests run where a GPU is found and otherwise report themselves skipped with
# the reason. The consumer test builds tests/consumer against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
build/tests/gpu/gpu_tests --gpu-status
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
