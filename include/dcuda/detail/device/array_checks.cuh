// The checks of the distributed arrays (dcuda/device/array.cuh), and the runs their range calls
// move with one get each.
#pragma once

#include <climits>
#include <cstdint>

#include "dcuda/detail/device/fail.cuh"
#include "dcuda/device/state.cuh"
#include "dcuda/distribution.h"

namespace dcuda::device {

// Thread 0: `layout` deals its elements to the `members` ranks of the array's communicator.
__device__ inline void check_distribution(const dcuda_state& gst, protocol::call call,
                                          const distribution& layout, int members) {
  if (layout.valid() && layout.units() == members) return;
  fail(gst.ctx, gst.world_rank, call, protocol::error_code::bad_distribution, layout.units(),
       static_cast<std::int64_t>(layout.block()), members);
}

// Elements [first, first + count) lie inside an array of `size` elements (the call fails
// otherwise, naming them).
__device__ inline void check_array_range(const dcuda_state& gst, protocol::call call,
                                         std::uint64_t first, std::uint64_t count,
                                         std::uint64_t size) {
  if (first <= size && count <= size - first) return;
  fail(gst.ctx, gst.world_rank, call, protocol::error_code::array_index_outside,
       static_cast<std::int64_t>(first), static_cast<std::int64_t>(count),
       static_cast<std::int64_t>(size));
}

// How many elements from `global` on one get moves: those that lie together on one rank, at most
// `remaining`, and no more bytes than a get's int size holds.
__device__ inline std::uint64_t array_run(const distribution& layout, std::uint64_t global,
                                          std::uint64_t remaining, std::uint64_t element_bytes) {
  const std::uint64_t most = static_cast<std::uint64_t>(INT_MAX) / element_bytes;
  std::uint64_t run = layout.contiguous_from(global);
  if (run > remaining) run = remaining;
  return run < most ? run : most;
}

}  // namespace dcuda::device
