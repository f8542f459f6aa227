#!/usr/bin/env bash
# The sanitizer builds of dcuda's host code and their tests (scripts/test.sh runs this after the
# MPICH pass; DCUDA_SANITIZE in CMakeLists.txt):
#   build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer: every CPU and MPI test
#                (ctest -L cpu, which includes the MPI tests)
#   build-tsan/  ThreadSanitizer: the CPU test programs (cpu_tests, bench_tests)
# Without the GPU targets (examples, tools, case studies, benchmarks, GPU tests): code that nvcc
# compiles is not instrumented. Any report ends the process that made it with an error, so the
# test fails, and so does this script.
#
# Leaks: the MPI library and the CUDA runtime keep some of their start-up allocations until the
# process ends; tests/sanitizers/lsan.supp lists those (by library) and nothing of dcuda's.
# Races: tests/sanitizers/tsan.supp lists only intentional hand-offs, each with its argument.
#
# Environment: SANITIZE_ONLY=asan|tsan runs one of the two; SANITIZE_JUNIT_DIR=DIR writes each
# ctest's JUnit report there (asan.xml, tsan.xml), which scripts/test.sh counts.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/mpi_launcher.sh
if [ -d /usr/local/cuda/bin ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
mpi_environment mpiexec
only=${SANITIZE_ONLY:-}
junit_dir=${SANITIZE_JUNIT_DIR:-}
jobs=$(nproc)

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
configure() {  # configure BUILD_DIR SANITIZERS
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
    -DDCUDA_SANITIZE="$2" -DDCUDA_BUILD_TESTS=ON -DDCUDA_BUILD_GPU_TESTS=OFF \
    -DDCUDA_BUILD_EXAMPLES=OFF -DDCUDA_BUILD_TOOLS=OFF -DDCUDA_BUILD_APPS=OFF \
    -DDCUDA_BUILD_BENCH=OFF -DDCUDA_WARNINGS_AS_ERRORS=ON \
    -DMPIEXEC_PREFLAGS="$(mpi_preflags mpiexec)" >/dev/null
}
asan_junit=()
tsan_junit=()
if [ -n "$junit_dir" ]; then
  asan_junit=(--output-junit "$junit_dir/asan.xml")
  tsan_junit=(--output-junit "$junit_dir/tsan.xml")
fi
suppressions="$PWD/tests/sanitizers"

if [ -z "$only" ] || [ "$only" = asan ]; then
  echo "sanitize.sh: AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
  configure build-asan address,undefined
  cmake --build build-asan
  # fast_unwind_on_malloc=0: whole allocation stacks through the MPI libraries (built without
  # frame pointers), so that lsan.supp can name them. Open MPI keeps its components loaded, so
  # that their frames have names too.
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0 \
    LSAN_OPTIONS="suppressions=$suppressions/lsan.supp:print_suppressions=0" \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    OMPI_MCA_mca_base_component_disable_dlclose=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -L cpu "${asan_junit[@]}"
fi

if [ -z "$only" ] || [ "$only" = tsan ]; then
  echo "sanitize.sh: ThreadSanitizer (build-tsan/)"
  configure build-tsan thread
  cmake --build build-tsan --target cpu_tests bench_tests
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$suppressions/tsan.supp" \
    ctest --test-dir build-tsan --output-on-failure -j "$jobs" -R '^(cpu_tests|bench_tests)\.' \
    "${tsan_junit[@]}"
fi
