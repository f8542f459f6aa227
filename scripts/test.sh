#!/usr/bin/env bash
# Runs every test: builds and installs first (scripts/install.sh, incremental, with the tests,
# benchmarks and case studies turned on and warnings as errors), then CTest. CPU tests run
# everywhere; GPU tests run where a GPU is found and otherwise report themselves skipped with
# the reason. The consumer test builds tests/consumer against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh -DDCUDA_BUILD_TESTS=ON -DDCUDA_BUILD_BENCH=ON -DDCUDA_BUILD_APPS=ON \
  -DDCUDA_WARNINGS_AS_ERRORS=ON
build/tests/gpu/gpu_tests --gpu-status
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
