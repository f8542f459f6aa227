// A CUDA driver call the runtime API lacks, found through cudaGetDriverEntryPointByVersion so
// that libdcuda links only the CUDA runtime.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace dcuda::runtime {

// The cudaMalloc allocation that contains `pointer`: its base and size. cuMemGetAddressRange.
struct allocation_range {
  void* base = nullptr;
  std::size_t size = 0;
};
allocation_range allocation_containing(const void* pointer);
// The same, or nothing where the driver knows no allocation at `pointer` (freed, never a CUDA
// allocation); other failures throw.
std::optional<allocation_range> find_allocation(const void* pointer);
// Whether `pointer` lies in memory of cudaMalloc (CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE),
// one allocation to the driver; false for memory of the virtual memory management API, managed
// memory, and where the driver cannot say.
bool made_by_cuda_malloc(const void* pointer);

// The driver's identity of the allocation that contains `pointer` (CU_POINTER_ATTRIBUTE_BUFFER_ID:
// unique for the process's lifetime, so an allocation freed and another made at the same address
// have different ones); none when no allocation contains it any more.
std::optional<std::uint64_t> allocation_id(const void* pointer);

// Holds `stream` until the 32-bit word at `word` (device memory) has reached `value`, counting in
// 32-bit wraparound: (int32_t)(*word - value) >= 0. `flush_remote_writes`: the work after the
// wait also sees the writes of other devices that reached this GPU before the word did
// (CU_STREAM_WAIT_VALUE_FLUSH; only where cudaDevAttrCanFlushRemoteWrites says so).
// cuStreamWaitValue32.
void wait_on_stream_until_reached(cudaStream_t stream, const std::uint32_t* word,
                                  std::uint32_t value, bool flush_remote_writes);

// Writes `value` to the 32-bit word at `word` (device memory, or page-locked host memory mapped
// into the device) once the work queued before it on `stream` has completed; its writes are
// visible before the word is (the default memory barrier). cuStreamWriteValue32.
void write_on_stream(cudaStream_t stream, std::uint32_t* word, std::uint32_t value);

}  // namespace dcuda::runtime
