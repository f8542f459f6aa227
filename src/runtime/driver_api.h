// CUDA calls the host proxy makes while a persistent kernel fills the GPU: two driver calls the
// runtime API lacks (found through cudaGetDriverEntryPointByVersion, so that libdcuda links only
// the CUDA runtime), and a copy that must not wait for free multiprocessors.
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

// cudaMemcpyAsync of `bytes` on `stream`, asking for the copy engines: a plain small copy may be
// run by a kernel, which never starts while dcuda's ranks occupy every multiprocessor (measured
// on an H200 with 132 ranks of 1024 threads: the proxy's host-to-device copies stalled).
void copy_beside_kernels(void* destination, const void* source, std::size_t bytes,
                         cudaStream_t stream);

}  // namespace dcuda::runtime
