// A CUDA driver call the runtime API lacks, found through cudaGetDriverEntryPointByVersion so
// that libdcuda links only the CUDA runtime.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace dcuda::runtime {

// The cudaMalloc allocation that contains `pointer`: its base and size. cuMemGetAddressRange.
struct allocation_range {
  void* base = nullptr;
  std::size_t size = 0;
};
allocation_range allocation_containing(const void* pointer);

}  // namespace dcuda::runtime
