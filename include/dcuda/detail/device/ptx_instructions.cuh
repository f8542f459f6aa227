// The inline PTX that orders no memory, apart from the clock (detail/device/clock.cuh): the lane
// read, a prefetch, leaving the kernel. (Memory-ordering PTX is in detail/device/memory_order.cuh.)
#pragma once

#include <cstdint>

namespace dcuda::device {

// The calling thread's lane in its warp. Not volatile: the compiler may combine or move it.
__device__ inline std::uint32_t lane_id() {
  std::uint32_t lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// Brings the line at `address` into L1. Returns no data, so nothing is read ahead of an
// ordering point; a load after it finds the line.
__device__ inline void prefetch_l1(const void* address) {
  asm volatile("prefetch.L1 [%0];" ::"l"(address));
}

// Ends the calling thread's part in the kernel, without a trap.
__device__ inline void exit_kernel() {
  asm volatile("exit;");
}

}  // namespace dcuda::device
