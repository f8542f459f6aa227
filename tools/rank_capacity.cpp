#include "rank_capacity.h"

#include <array>
#include <climits>
#include <stdexcept>

namespace dcuda::info {
namespace {

// The calculator says INT_MAX where the kernel does not use the resource.
int reported(int limit) {
  return limit == INT_MAX ? -1 : limit;
}

std::string limiting_resources(unsigned factors) {
  std::string text;
  const auto add = [&](unsigned bit, const char* name) {
    if ((factors & bit) == 0) return;
    if (!text.empty()) text += ", ";
    text += name;
  };
  add(OCC_LIMIT_REGISTERS, "registers");
  add(OCC_LIMIT_SHARED_MEMORY, "shared memory");
  add(OCC_LIMIT_WARPS, "threads");
  add(OCC_LIMIT_BLOCKS, "blocks per SM");
  add(OCC_LIMIT_BARRIERS, "barriers");
  return text;
}

cudaOccDeviceProp properties(int major, int minor, int sms, int threads_per_sm,
                             std::size_t shared_per_sm, std::size_t shared_per_block_optin,
                             std::size_t reserved_shared) {
  cudaOccDeviceProp gpu;
  gpu.computeMajor = major;
  gpu.computeMinor = minor;
  gpu.maxThreadsPerBlock = 1024;
  gpu.maxThreadsPerMultiprocessor = threads_per_sm;
  gpu.regsPerBlock = 65536;
  gpu.regsPerMultiprocessor = 65536;
  gpu.warpSize = 32;
  gpu.sharedMemPerBlock = 49152;
  gpu.sharedMemPerMultiprocessor = shared_per_sm;
  gpu.numSms = sms;
  gpu.sharedMemPerBlockOptin = shared_per_block_optin;
  gpu.reservedSharedMemPerBlock = reserved_shared;
  return gpu;
}

struct known_architecture {
  const char* architecture;
  reference_gpu gpu;
};

// As cudaGetDeviceProperties reports them.
const std::array<known_architecture, 7> known{{
    {"70", {"Tesla V100-SXM2", properties(7, 0, 80, 2048, 98304, 98304, 0)}},
    {"75", {"Tesla T4", properties(7, 5, 40, 1024, 65536, 65536, 0)}},
    {"80", {"A100-SXM4", properties(8, 0, 108, 2048, 167936, 166912, 1024)}},
    {"86", {"A40", properties(8, 6, 84, 1536, 102400, 101376, 1024)}},
    {"89", {"L40S", properties(8, 9, 142, 1536, 102400, 101376, 1024)}},
    {"90", {"H100 SXM", properties(9, 0, 132, 2048, 233472, 232448, 1024)}},
    {"100", {"B200", properties(10, 0, 148, 2048, 233472, 232448, 1024)}},
}};

}  // namespace

rank_capacity capacity_per_sm(const cudaOccDeviceProp& gpu, const kernel_resources& kernel) {
  cudaOccFuncAttributes attributes;
  attributes.maxThreadsPerBlock =
      kernel.max_threads_per_block > 0 ? kernel.max_threads_per_block : gpu.maxThreadsPerBlock;
  attributes.numRegs = kernel.registers_per_thread;
  attributes.sharedSizeBytes = kernel.shared_bytes_per_rank;
  attributes.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attributes.numBlockBarriers = 1;
  const cudaOccDeviceState state;
  cudaOccResult result{};
  rank_capacity capacity;
  if (kernel.threads_per_rank > attributes.maxThreadsPerBlock) {
    capacity.limited_by = "threads per block (the kernel allows " +
                          std::to_string(attributes.maxThreadsPerBlock) + ")";
    return capacity;
  }
  const cudaOccError status = cudaOccMaxActiveBlocksPerMultiprocessor(
      &result, &gpu, &attributes, &state, kernel.threads_per_rank, 0);
  if (status != CUDA_OCC_SUCCESS) {
    throw std::invalid_argument(
        status == CUDA_OCC_ERROR_UNKNOWN_DEVICE
            ? "the occupancy calculator does not know compute capability " +
                  std::to_string(gpu.computeMajor) + "." + std::to_string(gpu.computeMinor)
            : "the occupancy calculator rejects " + std::to_string(kernel.threads_per_rank) +
                  " threads, " + std::to_string(kernel.registers_per_thread) + " registers, " +
                  std::to_string(kernel.shared_bytes_per_rank) + " bytes of shared memory");
  }
  capacity.ranks_per_sm = result.activeBlocksPerMultiprocessor;
  capacity.by_threads = reported(result.blockLimitWarps);
  capacity.by_registers = reported(result.blockLimitRegs);
  capacity.by_shared_memory = reported(result.blockLimitSharedMem);
  capacity.by_blocks = reported(result.blockLimitBlocks);
  capacity.limited_by = limiting_resources(result.limitingFactors);
  return capacity;
}

const reference_gpu* reference_gpu_for(const std::string& architecture) {
  // "90a", "90-real": the number decides.
  std::string number;
  for (char c : architecture) {
    if (c < '0' || c > '9') break;
    number += c;
  }
  for (const known_architecture& entry : known) {
    if (number == entry.architecture) return &entry.gpu;
  }
  return nullptr;
}

}  // namespace dcuda::info
