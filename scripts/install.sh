#!/usr/bin/env bash
# Fresh machine -> built and installed dcuda. Installs the build tools it lacks (Debian/Ubuntu,
# as root or through sudo), configures, builds the library, dcuda-info and the examples in
# build/, and installs them with the CMake package into install/ (or $DCUDA_PREFIX).
# Tests, benchmarks and case studies are left out here: scripts/test.sh builds what it needs.
# Safe to run again: it only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -d /usr/local/cuda/bin ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v g++ >/dev/null || missing+=(g++)
command -v mpicxx >/dev/null || missing+=(libopenmpi-dev)
command -v mpirun >/dev/null || missing+=(openmpi-bin)
if [ ${#missing[@]} -gt 0 ]; then
  echo "install.sh: installing ${missing[*]}"
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd=sudo; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
if ! command -v nvcc >/dev/null; then
  echo "install.sh: the CUDA toolkit (nvcc) was not found in PATH or /usr/local/cuda/bin;" >&2
  echo "            dcuda needs CUDA 12.8 or newer to build (its tests skip without a GPU)." >&2
  exit 1
fi

prefix="${DCUDA_PREFIX:-$PWD/install}"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# Arguments are passed on to CMake after these defaults (scripts/test.sh turns the tests on).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" \
      -DDCUDA_BUILD_TESTS=OFF -DDCUDA_BUILD_BENCH=OFF -DDCUDA_BUILD_APPS=OFF \
      -DDCUDA_BUILD_EXAMPLES=ON -DDCUDA_BUILD_TOOLS=ON "$@" >/dev/null
cmake --build build
cmake --install build >/dev/null
echo "install.sh: dcuda built in build/ and installed in $prefix"
