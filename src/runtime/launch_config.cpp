#include "runtime/launch_config.h"

#include <algorithm>
#include <climits>
#include <string>

#include "runtime/error.h"

namespace dcuda::runtime {

launch_config plan_launch(dcuda_kernel_t kernel, int device, int threads_per_rank,
                          std::optional<int> max_ranks, int reserved_blocks) {
  cudaDeviceProp properties{};
  DCUDA_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  if (threads_per_rank < 1 || threads_per_rank > properties.maxThreadsPerBlock) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                "dcuda_host_init: threads_per_rank " + std::to_string(threads_per_rank) +
                    " is outside 1.." + std::to_string(properties.maxThreadsPerBlock) + " of " +
                    properties.name);
  }
  int cooperative = 0;
  DCUDA_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (cooperative == 0) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                std::string("dcuda_host_init: ") + properties.name +
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
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                "dcuda_host_init: the kernel cannot run even one rank of " +
                    std::to_string(threads_per_rank) +
                    " threads on a multiprocessor: it can run at most " +
                    std::to_string(uses.maxThreadsPerBlock) + " threads per block (" +
                    std::to_string(uses.numRegs) + " registers per thread, " +
                    std::to_string(uses.sharedSizeBytes) +
                    " bytes of shared memory per block); declare it __launch_bounds__(" +
                    std::to_string(threads_per_rank) +
                    ") so that the compiler fits it, or lower threads_per_rank");
  }
  const int resident = per_sm * properties.multiProcessorCount;
  if (resident <= reserved_blocks) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                "dcuda_host_init: " + std::to_string(resident) +
                    " resident block(s) of the kernel leave no room for a rank beside the delivery "
                    "agent; lower threads_per_rank or the kernel's resource use");
  }
  launch_config config{resident - reserved_blocks, per_sm, properties.multiProcessorCount};
  if (max_ranks) config.ranks = std::min(config.ranks, *max_ranks);
  return config;
}

std::string describe_launch(dcuda_kernel_t kernel, int device, int threads_per_rank, int ranks) {
  cudaDeviceProp properties{};
  cudaFuncAttributes uses{};
  int per_sm = 0;
  if (cudaGetDeviceProperties(&properties, device) != cudaSuccess ||
      cudaFuncGetAttributes(&uses, reinterpret_cast<const void*>(kernel)) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(kernel),
                                                    threads_per_rank, 0) != cudaSuccess) {
    cudaGetLastError();
    return "launch: " + std::to_string(ranks) + " ranks of " + std::to_string(threads_per_rank) +
           " threads (the occupancy query failed)";
  }
  // Each resource's own bound on blocks per multiprocessor (before allocation granularity, so
  // an estimate); the smallest is what limits the ranks.
  const auto bound = [](long available, long per_block) {
    return per_block > 0 ? available / per_block : long{INT_MAX};
  };
  const std::pair<long, std::string> bounds[] = {
      {bound(properties.maxThreadsPerMultiProcessor, threads_per_rank),
       "threads (" + std::to_string(properties.maxThreadsPerMultiProcessor) +
           " per multiprocessor)"},
      {bound(properties.regsPerMultiprocessor, static_cast<long>(uses.numRegs) * threads_per_rank),
       "registers (" + std::to_string(uses.numRegs) + " per thread, " +
           std::to_string(properties.regsPerMultiprocessor) + " per multiprocessor)"},
      {bound(static_cast<long>(properties.sharedMemPerMultiprocessor),
             static_cast<long>(uses.sharedSizeBytes)),
       "shared memory (" + std::to_string(uses.sharedSizeBytes) + " bytes per rank, " +
           std::to_string(properties.sharedMemPerMultiprocessor) + " per multiprocessor)"},
      {properties.maxBlocksPerMultiProcessor,
       "blocks (" + std::to_string(properties.maxBlocksPerMultiProcessor) +
           " per multiprocessor)"}};
  const auto* limit =
      std::min_element(std::begin(bounds), std::end(bounds),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
  const int resident = per_sm * properties.multiProcessorCount;
  std::string text = "launch: " + std::to_string(ranks) + " ranks of " +
                     std::to_string(threads_per_rank) + " threads; " + std::to_string(per_sm) +
                     " fit a multiprocessor, limited by " + limit->second + ", x " +
                     std::to_string(properties.multiProcessorCount) +
                     " multiprocessors = " + std::to_string(resident);
  if (ranks < resident) {
    text += " (the rest kept back: DCUDA_RANKS_PER_DEVICE, or the delivery agent's block)";
  }
  return text;
}

}  // namespace dcuda::runtime
