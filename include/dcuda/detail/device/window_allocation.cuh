// Team-aligned allocation (dcuda_win_allocate, dcuda::array): a part of the same size from each
// rank's heap, made one window of a communicator.
#pragma once

#include <cstdint>

#include "dcuda/detail/device/heap_blocks.cuh"
#include "dcuda/detail/device/rank_entry.cuh"
#include "dcuda/device/window.cuh"

namespace dcuda::device {

// (rank), every rank of `comm`, in the same order: `size` bytes from the caller's heap become its
// part of a new window of `comm` (`*base`, `*win`). Where all window slots are in use, `*win` is
// DCUDA_WIN_NONE, `*base` null and the memory goes back. `call` names the caller's call in the
// report where the heap has no block that large.
__device__ inline void allocate_window(dcuda_state& gst, protocol::call call, dcuda_comm comm,
                                       std::uint64_t size, void** base, dcuda_win* win) {
  __shared__ char* part_of_rank;  // thread 0's block, read by every thread after the entry
  if (threadIdx.x == 0) part_of_rank = own_heap_segment(gst) + heap_allocate(gst, call, size);
  enter_rank_call(gst.ctx, call);
  char* part = part_of_rank;
  __syncthreads();  // `part_of_rank` free for the next call
  // A block is at most 2^heap_max_order bytes, within a window's int size.
  dcuda_win_create(gst, comm, part, static_cast<int>(size), win);
  if (threadIdx.x == 0) {
    if (*win == DCUDA_WIN_NONE) {
      heap_release_offset(gst, call, dcuda_gptr{gst.world_rank, protocol::heap_window, 0},
                          static_cast<std::uint64_t>(part - own_heap_segment(gst)));
    } else {
      gst.allocated_windows |= 1u << protocol::window_slot(*win);
    }
  }
  *base = *win == DCUDA_WIN_NONE ? nullptr : part;
}

}  // namespace dcuda::device
