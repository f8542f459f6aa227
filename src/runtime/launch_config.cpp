#include "runtime/launch_config.h"

#include <algorithm>
#include <string>

#include "runtime/error.h"

namespace dcuda::runtime {

launch_config plan_launch(dcuda_kernel_t kernel, int device, int threads_per_rank,
                          std::optional<int> max_ranks, int reserved_blocks) {
  cudaDeviceProp properties{};
  DCUDA_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  if (threads_per_rank < 1 || threads_per_rank > properties.maxThreadsPerBlock) {
    throw error("dcuda_host_init: threads_per_rank " + std::to_string(threads_per_rank) +
                " is outside 1.." + std::to_string(properties.maxThreadsPerBlock) + " of " +
                properties.name);
  }
  int cooperative = 0;
  DCUDA_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (cooperative == 0) {
    throw error(std::string("dcuda_host_init: ") + properties.name +
                " cannot launch cooperative kernels, which dcuda needs to keep every rank "
                "resident");
  }
  // A kernel declared without __launch_bounds__ may use more registers than 1024 threads leave
  // each (the compiler then assumes few threads per block); maxThreadsPerBlock says how many
  // threads its registers and its own __launch_bounds__ allow. Checked before the occupancy
  // query, which is not asked about block sizes the kernel cannot launch.
  cudaFuncAttributes uses{};
  DCUDA_CUDA_CHECK(cudaFuncGetAttributes(&uses, reinterpret_cast<const void*>(kernel)));
  int per_sm = 0;
  if (threads_per_rank <= uses.maxThreadsPerBlock) {
    DCUDA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, reinterpret_cast<const void*>(kernel), threads_per_rank, 0));
  }
  if (per_sm == 0) {
    throw error("dcuda_host_init: the kernel cannot run even one rank of " +
                std::to_string(threads_per_rank) +
                " threads on a multiprocessor: it can run at most " +
                std::to_string(uses.maxThreadsPerBlock) + " threads per block (" +
                std::to_string(uses.numRegs) + " registers per thread, " +
                std::to_string(uses.sharedSizeBytes) +
                " bytes of shared memory per block); declare it __launch_bounds__(" +
                std::to_string(threads_per_rank) +
                ") so that the compiler fits it, or lower threads_per_rank");
  }
  return plan_ranks(per_sm, properties.multiProcessorCount, max_ranks, reserved_blocks);
}

launch_config plan_ranks(int ranks_per_sm, int multiprocessors, std::optional<int> max_ranks,
                         int reserved_blocks) {
  const int resident = ranks_per_sm * multiprocessors;
  if (resident <= reserved_blocks) {
    throw error("dcuda_host_init: " + std::to_string(resident) +
                " resident block(s) of the kernel leave no room for a rank beside the delivery "
                "agent; lower threads_per_rank or the kernel's resource use");
  }
  launch_config config{resident - reserved_blocks, ranks_per_sm, multiprocessors};
  if (max_ranks) config.ranks = std::min(config.ranks, *max_ranks);
  return config;
}

}  // namespace dcuda::runtime
