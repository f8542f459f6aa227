// How many ranks of a kernel one multiprocessor holds, and which resource runs out first. The CUDA
// occupancy calculator (cuda_occupancy.h) needs no GPU, only the GPU's properties and the
// kernel's resource use, so dcuda-info answers for kernels it knows only by their resource use
// and, without a GPU, for a typical GPU of each architecture the build targets.
#pragma once

#include <cuda_occupancy.h>

#include <cstddef>
#include <string>

namespace dcuda::info {

struct kernel_resources {
  int threads_per_rank = 0;
  int registers_per_thread = 0;
  std::size_t shared_bytes_per_rank = 0;  // static shared memory, the rank's dcuda_state included
  int max_threads_per_block = 0;  // what the kernel's registers and __launch_bounds__ allow;
                                  // 0: as many as the GPU allows
};

struct rank_capacity {
  int ranks_per_sm = 0;  // 0: not even one rank fits
  // Ranks per multiprocessor that each resource alone would allow; -1 where the kernel does not
  // use the resource.
  int by_threads = 0;
  int by_registers = 0;
  int by_shared_memory = 0;
  int by_blocks = 0;       // the multiprocessor's limit on resident blocks
  std::string limited_by;  // e.g. "registers" or "threads, blocks per SM"
};

// Throws std::invalid_argument when the calculator rejects the input (a block too large, an
// architecture it does not know).
rank_capacity capacity_per_sm(const cudaOccDeviceProp& gpu, const kernel_resources& kernel);

struct reference_gpu {
  const char* name;
  cudaOccDeviceProp properties;
};

// A typical GPU of an architecture ("90": compute capability 9.0), for answers without a GPU;
// nullptr when none is known.
const reference_gpu* reference_gpu_for(const std::string& architecture);

}  // namespace dcuda::info
