#include "runtime/driver_api.h"

#include <cuda.h>

#include <string>

#include "runtime/error.h"

namespace dcuda::runtime {
namespace {

template <typename Function>
Function driver_function(const char* name) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  DCUDA_CUDA_CHECK(
      cudaGetDriverEntryPointByVersion(name, &function, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || function == nullptr) {
    throw error(DCUDA_ERROR_CUDA, std::string("the CUDA driver does not provide ") + name);
  }
  return reinterpret_cast<Function>(function);
}

void check_driver(CUresult status, const char* call) {
  if (status == CUDA_SUCCESS) return;
  throw error(DCUDA_ERROR_CUDA, std::string(call) + " failed with CUDA driver error " +
                                    std::to_string(static_cast<int>(status)));
}

}  // namespace

std::optional<allocation_range> find_allocation(const void* pointer) {
  using address_range = CUresult (*)(CUdeviceptr*, std::size_t*, CUdeviceptr);
  static const auto range = driver_function<address_range>("cuMemGetAddressRange");
  CUdeviceptr base = 0;
  std::size_t size = 0;
  const CUresult status = range(&base, &size, reinterpret_cast<CUdeviceptr>(pointer));
  if (status == CUDA_ERROR_NOT_FOUND || status == CUDA_ERROR_INVALID_VALUE) return std::nullopt;
  check_driver(status, "cuMemGetAddressRange");
  return allocation_range{reinterpret_cast<void*>(base), size};
}

allocation_range allocation_containing(const void* pointer) {
  if (std::optional<allocation_range> found = find_allocation(pointer)) return *found;
  throw error(DCUDA_ERROR_CUDA, "cuMemGetAddressRange: no CUDA allocation contains the address");
}

bool made_by_cuda_malloc(const void* pointer) {
  using pointer_attribute = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
  static const auto attribute = driver_function<pointer_attribute>("cuPointerGetAttribute");
  int legacy = 0;
  return attribute(&legacy, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                   reinterpret_cast<CUdeviceptr>(pointer)) == CUDA_SUCCESS &&
         legacy != 0;
}

std::optional<std::uint64_t> allocation_id(const void* pointer) {
  using pointer_attribute = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
  static const auto attribute = driver_function<pointer_attribute>("cuPointerGetAttribute");
  std::uint64_t id = 0;
  const CUresult status =
      attribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, reinterpret_cast<CUdeviceptr>(pointer));
  // Freed memory is an answer, not a failure: the driver no longer knows the address.
  if (status == CUDA_ERROR_INVALID_VALUE) return std::nullopt;
  check_driver(status, "cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_BUFFER_ID)");
  return id;
}

void wait_on_stream_until_reached(cudaStream_t stream, const std::uint32_t* word,
                                  std::uint32_t value, bool flush_remote_writes) {
  using wait_value = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
  static const auto wait = driver_function<wait_value>("cuStreamWaitValue32");
  const unsigned flags =
      static_cast<unsigned>(CU_STREAM_WAIT_VALUE_GEQ) |
      (flush_remote_writes ? static_cast<unsigned>(CU_STREAM_WAIT_VALUE_FLUSH) : 0u);
  check_driver(wait(stream, reinterpret_cast<CUdeviceptr>(word), value, flags),
               "cuStreamWaitValue32");
}

void write_on_stream(cudaStream_t stream, std::uint32_t* word, std::uint32_t value) {
  using write_value = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
  static const auto write = driver_function<write_value>("cuStreamWriteValue32");
  check_driver(write(stream, reinterpret_cast<CUdeviceptr>(word), value,
                     static_cast<unsigned>(CU_STREAM_WRITE_VALUE_DEFAULT)),
               "cuStreamWriteValue32");
}

}  // namespace dcuda::runtime
