// How a block copies `size` bytes from `src` to `dst`: a few single bytes until both pointers
// reach the widest alignment they can share, then vectors of that width, then a tail of bytes.
// Computed the same way on host and device so the CPU tests check the split the GPU uses.
#pragma once

#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

struct copy_plan {
  std::uint64_t head_bytes;    // bytes copied one at a time before the vector part
  std::uint32_t vector_bytes;  // 16, 8, 4 or 1
  std::uint64_t vectors;       // number of vector_bytes-wide elements
  std::uint64_t tail_bytes;    // bytes after the vector part
};

DCUDA_HD constexpr copy_plan plan_copy(std::uint64_t src, std::uint64_t dst, std::uint64_t size) {
  // The widest width w such that src and dst are congruent modulo w: only then can one prologue
  // align both.
  // Congruence and head by masks, not %, since width is a power of two (a 64-bit remainder by a
  // run-time value costs ~100 instructions). The vector count below still divides.
  const std::uint64_t differ = src ^ dst;
  std::uint32_t width = (differ & 15u) == 0  ? 16u
                        : (differ & 7u) == 0 ? 8u
                        : (differ & 3u) == 0 ? 4u
                                             : 1u;
  std::uint64_t head = (width - (src & (width - 1u))) & (width - 1u);
  if (head > size) head = size;
  const std::uint64_t vectors = (size - head) / width;
  return copy_plan{head, width, vectors, size - head - vectors * width};
}

}  // namespace dcuda::protocol
