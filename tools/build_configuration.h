// What dcuda-info says about dcuda itself: the version, how this copy was built (passed in by
// CMake, tools/CMakeLists.txt), and the CUDA and MPI it runs with.
#pragma once

#include <string>
#include <vector>

namespace dcuda::info {

// The architectures the build targets, as CMAKE_CUDA_ARCHITECTURES lists them ("80", "90a").
std::vector<std::string> built_architectures();

void print_build_configuration();

}  // namespace dcuda::info
