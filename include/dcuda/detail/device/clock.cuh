#pragma once

#include <cstdint>

namespace dcuda::device {

// Nanoseconds from the GPU's global timer: unaffected by SM clock changes, coarse (about 1 us),
// which is plenty for deciding that a wait has lasted "long".
__device__ inline std::uint64_t global_time_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace dcuda::device
