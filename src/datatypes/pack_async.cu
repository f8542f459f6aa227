// dcuda_pack_async / dcuda_unpack_async: the typed copy (protocol/typed_copy.h) as a kernel on the
// caller's stream, every warp of the grid a worker.
#include <algorithm>
#include <string>

#include "datatypes/type_registry.h"
#include "dcuda/datatype.h"
#include "dcuda/detail/protocol/typed_copy.h"
#include "runtime/api_boundary.h"

namespace {

using dcuda::protocol::type_layout;

constexpr unsigned threads_per_block = 256;
constexpr unsigned warps_per_block = threads_per_block / 32;
constexpr unsigned max_blocks = 2048;

// `typed`: the type's layout in the GPU's type table; the packed side is contiguous.
__global__ void __launch_bounds__(threads_per_block)
    typed_copy_kernel(const type_layout* typed, std::uint64_t count, char* typed_bytes,
                      char* packed_bytes, bool packing) {
  const type_layout contiguous = dcuda::protocol::contiguous_layout(count * typed->size);
  const dcuda::protocol::typed_copy copy =
      packing
          ? dcuda::protocol::plan_typed_copy(packed_bytes, contiguous, typed_bytes, *typed, count)
          : dcuda::protocol::plan_typed_copy(typed_bytes, *typed, packed_bytes, contiguous, 1);
  const unsigned thread = blockIdx.x * blockDim.x + threadIdx.x;
  dcuda::protocol::copy_typed_share(copy, thread / 32, gridDim.x * warps_per_block, thread % 32,
                                    32);
}

void launch(const char* call, dcuda_datatype type, int count, const void* typed, const void* packed,
            cudaStream_t stream, bool packing) {
  using dcuda::runtime::error;
  if (count < 0) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                std::string(call) + ": count is negative (" + std::to_string(count) + ")");
  }
  auto& registry = dcuda::datatypes::type_registry::instance();
  const auto built = registry.layout(type, call);  // committed, or an error naming the handle
  if (!packing && (built->layout.flags & dcuda::protocol::layout_overlaps) != 0u) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                std::string(call) + ": the datatype " + dcuda::datatypes::handle_text(type) +
                    " covers some byte twice and cannot lay out the bytes unpacked");
  }
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * built->layout.size;
  if (bytes == 0) return;
  if (typed == nullptr || packed == nullptr) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                std::string(call) + ": a buffer is NULL for " + std::to_string(bytes) + " bytes");
  }
  int device = 0;
  DCUDA_CUDA_CHECK(cudaStreamGetDevice(stream, &device));
  const dcuda::protocol::type_entry* table = registry.device_table(device);
  const std::uint64_t chunks =
      (bytes + dcuda::protocol::typed_chunk_bytes - 1) / dcuda::protocol::typed_chunk_bytes;
  const auto blocks = static_cast<unsigned>(
      std::min<std::uint64_t>((chunks + warps_per_block - 1) / warps_per_block, max_blocks));
  int previous = 0;
  DCUDA_CUDA_CHECK(cudaGetDevice(&previous));
  if (previous != device) DCUDA_CUDA_CHECK(cudaSetDevice(device));
  typed_copy_kernel<<<blocks, threads_per_block, 0, stream>>>(
      &table[type.id].layout, static_cast<std::uint64_t>(count),
      static_cast<char*>(const_cast<void*>(typed)), static_cast<char*>(const_cast<void*>(packed)),
      packing);
  const cudaError_t launched = cudaGetLastError();
  if (previous != device) cudaSetDevice(previous);
  if (launched != cudaSuccess)
    dcuda::runtime::throw_cuda_error(launched, "typed_copy_kernel<<<>>>");
}

}  // namespace

void dcuda_pack_async(dcuda_datatype type, int count, const void* source, void* packed,
                      cudaStream_t stream) {
  dcuda::runtime::guarded("dcuda_pack_async", [&] {
    launch("dcuda_pack_async", type, count, source, packed, stream, true);
  });
}

void dcuda_unpack_async(dcuda_datatype type, int count, const void* packed, void* target,
                        cudaStream_t stream) {
  dcuda::runtime::guarded("dcuda_unpack_async", [&] {
    launch("dcuda_unpack_async", type, count, target, packed, stream, false);
  });
}
