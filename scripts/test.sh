#!/usr/bin/env bash
# Runs every test: builds and installs first (scripts/install.sh, incremental, with the tests,
# benchmarks and case studies turned on and warnings as errors; NVSHMEM from pip for its
# comparison benchmark), then CTest. CPU tests run everywhere; GPU tests run where a GPU is found
# and otherwise report themselves skipped with the reason. The consumer test builds
# tests/consumer against the installed package.
# The MPI engine soaks for 60 s (DCUDA_SOAK_SECONDS, tests/mpi/CMakeLists.txt).
# Then the MPI tests again under MPICH (Debian's mpich, installed here if missing): the MPI test
# programs alone, built in build-mpich/ against MPICH, `ctest -L mpi -LE gpu` there.
# Then the sanitizer builds of the CPU and MPI tests and the fuzz targets (scripts/sanitize.sh,
# scripts/fuzz.sh; Debian's clang installed here if missing).
# Arguments are passed on to the first ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/mpi_launcher.sh
if [ -d /usr/local/cuda/bin ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

# NVSHMEM's headers and libraries (pip's nvidia-nvshmem-cu13), so that the NVSHMEM comparison
# (bench/nvshmem_latency) compiles here too; without them it is left out and CMake says so.
nvshmem_found() {  # its header in the Python package (an empty namespace package imports too)
  python3 -c 'import os, sys, nvidia.nvshmem as m
sys.exit(0 if any(os.path.isfile(os.path.join(p, "include", "nvshmem.h")) for p in m.__path__) else 1)' \
    2>/dev/null
}
if ! nvshmem_found; then
  echo "test.sh: installing nvidia-nvshmem-cu13 (pip), for bench/nvshmem_latency"
  python3 -m pip install -q nvidia-nvshmem-cu13 ||
    echo "test.sh: NVSHMEM could not be installed; bench/nvshmem_latency is not built" >&2
fi

# The default MPI (FindMPI takes mpiexec from PATH): its options through CMake, not the tests.
mpi_environment mpiexec
bash scripts/install.sh -DDCUDA_BUILD_TESTS=ON -DDCUDA_BUILD_BENCH=ON -DDCUDA_BUILD_APPS=ON \
  -DDCUDA_WARNINGS_AS_ERRORS=ON -DMPIEXEC_PREFLAGS="$(mpi_preflags mpiexec)" \
  -DDCUDA_SOAK_SECONDS=60
build/tests/gpu/gpu_tests --gpu-status
summary_dir=$(mktemp -d)
trap 'rm -rf "$summary_dir"' EXIT
ctest --test-dir build --output-on-failure -j "$(nproc)" --output-junit "$summary_dir/main.xml" "$@"

echo "test.sh: the MPI tests under MPICH (build-mpich/)"
if ! command -v mpiexec.mpich >/dev/null || ! command -v mpicxx.mpich >/dev/null; then
  echo "test.sh: installing mpich libmpich-dev"
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd=sudo; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq mpich libmpich-dev
fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
configured=$(cmake -S . -B build-mpich -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" -DMPI_CXX_COMPILER=mpicxx.mpich \
  -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)" \
  -DMPIEXEC_PREFLAGS="$(mpi_preflags mpiexec.mpich)" -DDCUDA_BUILD_TESTS=ON \
  -DDCUDA_BUILD_APPS=OFF -DDCUDA_BUILD_BENCH=OFF -DDCUDA_BUILD_EXAMPLES=OFF \
  -DDCUDA_BUILD_TOOLS=OFF -DDCUDA_WARNINGS_AS_ERRORS=ON)
# FindMPI may still find another MPI first (a stale cache, an MPI earlier in PATH).
if ! grep -q "dcuda tests: MPI library: MPICH" <<<"$configured"; then
  grep "dcuda tests:" <<<"$configured" >&2 || true
  echo "test.sh: build-mpich did not find MPICH (remove build-mpich/ and run again)" >&2
  exit 1
fi
grep "dcuda tests:" <<<"$configured"
cmake --build build-mpich --target mpi_tests mpi_dies_early mpi_engine_soak
ctest --test-dir build-mpich --output-on-failure -j "$(nproc)" -L mpi -LE gpu \
  --output-junit "$summary_dir/mpich.xml"

# The sanitizer builds and the fuzz targets (scripts/sanitize.sh, scripts/fuzz.sh), with Debian's
# clang for libFuzzer (installed here if missing). Their JUnit reports join the count below.
fuzzer_links() {
  command -v clang++ >/dev/null && clang++ -x c++ -fsanitize=fuzzer -o "$summary_dir/fuzzer_check" - \
    <<<'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' 2>/dev/null
}
if ! fuzzer_links; then
  # libFuzzer is in clang's run-time package, which apt may leave out (a recommendation only).
  echo "test.sh: installing clang and its run-time libraries"
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd=sudo; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq clang
  clang_major=$(clang++ --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n 1)
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "libclang-rt-$clang_major-dev"
fi
SANITIZE_JUNIT_DIR="$summary_dir" bash scripts/sanitize.sh
FUZZ_JUNIT="$summary_dir/fuzz.xml" bash scripts/fuzz.sh

# One closing line for every run (each stopped the script above if anything failed).
python3 - "$summary_dir"/*.xml <<'PY'
import sys
import xml.etree.ElementTree as tree
passed = failed = skipped = 0
for name in sys.argv[1:]:
    for case in tree.parse(name).getroot().iter("testcase"):
        status = case.get("status", "")
        if status == "run":
            passed += 1
        elif status in ("notrun", "disabled"):
            skipped += 1
        else:
            failed += 1
print(f"test.sh: {passed} passed, {failed} failed, {skipped} skipped")
PY
