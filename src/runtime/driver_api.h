// The two CUDA driver calls the runtime needs and the runtime API lacks, found through
// cudaGetDriverEntryPointByVersion so that libdcuda links only the CUDA runtime.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace dcuda::runtime {

// Writes `value` to the device word `address` once the work before it on `stream` is complete
// (with a memory barrier: that work's writes are visible first). cuStreamWriteValue32.
void stream_write_value(cudaStream_t stream, std::uint32_t* address, std::uint32_t value);

// The cudaMalloc allocation that contains `pointer`: its base and size. cuMemGetAddressRange.
struct allocation_range {
  void* base = nullptr;
  std::size_t size = 0;
};
allocation_range allocation_containing(const void* pointer);

}  // namespace dcuda::runtime
