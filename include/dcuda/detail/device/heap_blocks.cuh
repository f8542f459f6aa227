// The machinery of the rank heaps (dcuda/device/heap.cuh, protocol/heap_layout.h): each rank's
// thread 0 alone allocates from and frees into its own segment, so the allocator needs no
// atomics. Its bookkeeping lives in this GPU's memory and is read with plain loads: only this
// thread ever writes it, so no load can find a stale line.
#pragma once

#include <cstdint>

#include "dcuda/detail/device/fail.cuh"
#include "dcuda/detail/device/window_slots.cuh"
#include "dcuda/detail/protocol/buddy_heap.h"
#include "dcuda/detail/protocol/heap_layout.h"
#include "dcuda/device/state.cuh"
#include "dcuda/global_pointer.h"

namespace dcuda::device {

// This rank's segment in this GPU's memory (null without heaps).
__device__ inline char* own_heap_segment(const dcuda_state& gst) {
  return gst.heap_segment;
}

// Thread 0: a block of at least `size` bytes from this rank's heap; its offset in the segment.
// The call fails (heap_exhausted) where no free block is that large, or there are no heaps.
// The allocator is copied into registers and written back: each of its fields would otherwise
// be a load from memory at every step of the walk.
__device__ inline std::uint64_t heap_allocate(const dcuda_state& gst, protocol::call call,
                                              std::uint64_t size) {
  protocol::buddy_heap* kept = gst.heap;
  if (kept == nullptr) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::heap_exhausted,
         static_cast<std::int64_t>(size), 0, 0);
  }
  protocol::buddy_heap heap = *kept;
  const protocol::buddy_allocation block = heap.allocate(size);
  if (block.status != protocol::buddy_status::ok) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::heap_exhausted,
         static_cast<std::int64_t>(size), static_cast<std::int64_t>(heap.largest_free()),
         static_cast<std::int64_t>(heap.capacity()));
  }
  *kept = heap;
  return block.offset;
}

// Stops the run: `call` refused to free `p`, for the reason `why`.
[[noreturn]] __device__ inline void refuse_heap_free(const dcuda_state& gst, protocol::call call,
                                                     dcuda_gptr p,
                                                     protocol::heap_free_refusal why) {
  fail(gst.ctx, gst.world_rank, call, protocol::error_code::bad_heap_free, p.unit, p.window,
       static_cast<std::int64_t>(p.offset), static_cast<std::int64_t>(why));
}

// Thread 0: gives the allocation at `offset` of this rank's segment back; `p` names it in the
// report of a refusal.
__device__ inline void heap_release_offset(const dcuda_state& gst, protocol::call call,
                                           dcuda_gptr p, std::uint64_t offset) {
  using protocol::heap_free_refusal;
  heap_free_refusal why = heap_free_refusal::outside_segment;  // no heaps: nothing to free
  if (protocol::buddy_heap* kept = gst.heap) {
    protocol::buddy_heap heap = *kept;
    const protocol::buddy_status status = heap.release(offset);
    if (status == protocol::buddy_status::ok) {
      *kept = heap;
      return;
    }
    why = status == protocol::buddy_status::inside_block      ? heap_free_refusal::inside_block
          : status == protocol::buddy_status::outside_segment ? heap_free_refusal::outside_segment
                                                              : heap_free_refusal::not_allocated;
  }
  refuse_heap_free(gst, call, p, why);
}

// Thread 0: dcuda_free's checks (a pointer into this rank's own heap) and the release.
__device__ inline void heap_release(const dcuda_state& gst, protocol::call call, dcuda_gptr p) {
  if (p.window != protocol::heap_window) {
    refuse_heap_free(gst, call, p, protocol::heap_free_refusal::not_heap);
  }
  if (p.unit != gst.world_rank) {
    refuse_heap_free(gst, call, p, protocol::heap_free_refusal::other_rank);
  }
  heap_release_offset(gst, call, p, p.offset);
}

// Thread 0: this rank's part of window `win` (in `slot`), which dcuda_win_allocate made, back to
// the heap. The window's entry still holds the part's address: whoever ends the window clears
// only its generation.
__device__ inline void release_allocated_part(dcuda_state& gst, protocol::call call, int slot,
                                              dcuda_win win) {
  const std::uint64_t offset = window_of(gst, slot, gst.world_rank).base -
                               reinterpret_cast<std::uint64_t>(own_heap_segment(gst));
  gst.allocated_windows &= ~(1u << slot);
  heap_release_offset(gst, call, dcuda_gptr{gst.world_rank, win, offset}, offset);
}

// Thread 0, at dcuda_gpu_finish, after its world barrier: the parts of the windows
// dcuda_win_allocate made that the run leaves open go back to the heap. The windows end with the
// run (a later run refuses their handles); the heap outlives it.
__device__ inline void release_open_allocated_windows(dcuda_state& gst) {
  while (gst.allocated_windows != 0u) {
    const int slot = __ffs(static_cast<int>(gst.allocated_windows)) - 1;
    release_allocated_part(gst, protocol::call::gpu_finish, slot,
                           protocol::encode_window(slot, gst.generation[slot]));
  }
}

}  // namespace dcuda::device
