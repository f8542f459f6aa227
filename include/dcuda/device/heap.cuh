// Allocation from the rank heaps (extension), as DART-CUDA under DASH allocates: every rank owns
// a heap segment (DCUDA_HEAP_BYTES, 1 MiB by default) that the processes of its node mapped
// when the host context was created, so an allocation is a local step of a buddy allocator, with
// no registration, no exchange and no other rank involved.
//
// - dcuda_malloc gives a global pointer into the caller's own segment; any rank may put, get and
//   use atomics on it (dcuda/device/global_access.cuh) once it has the pointer. Allocations live
//   until dcuda_free, across the runs of the host context.
// - dcuda_win_allocate is team-aligned allocation: every rank of a communicator takes the same
//   size from its own heap and the parts become one window, whose global pointers step across
//   ranks (dcuda_gptr_add). dcuda_win_free gives the memory back.
#pragma once

#include <cstdint>

#include "dcuda/detail/device/heap_blocks.cuh"
#include "dcuda/detail/device/rank_entry.cuh"
#include "dcuda/detail/device/window_allocation.cuh"
#include "dcuda/device/handles.cuh"
#include "dcuda/device/state.cuh"
#include "dcuda/device/window.cuh"
#include "dcuda/global_pointer.h"

// The window of every rank's heap: the window of the global pointers dcuda_malloc gives, over
// DCUDA_COMM_WORLD (their unit is the owner's world rank).
#define DCUDA_WIN_HEAP (dcuda::protocol::heap_window)

// (rank). A block of at least `size` bytes in the caller's heap (a power of two, at least 256,
// aligned to its size): the same pointer in every thread. The run stops with heap_exhausted,
// naming the largest free block, where none is large enough.
__device__ inline dcuda_gptr dcuda_malloc(dcuda_state& gst, std::uint64_t size) {
  using namespace dcuda;
  __shared__ std::uint64_t offset;  // thread 0's result, read by every thread after the entry
  constexpr protocol::call call = protocol::call::rank_malloc;
  if (threadIdx.x == 0) offset = device::heap_allocate(gst, call, size);
  device::enter_rank_call(gst.ctx, call);
  const dcuda_gptr block{gst.world_rank, DCUDA_WIN_HEAP, offset};
  __syncthreads();  // `offset` free for the next call
  return block;
}

// (rank). Frees what dcuda_malloc gave this rank: `p` must be such a pointer, unmoved. Any other
// pointer stops the run with bad_heap_free, naming it and why.
__device__ inline void dcuda_free(dcuda_state& gst, dcuda_gptr p) {
  using namespace dcuda;
  constexpr protocol::call call = protocol::call::rank_free;
  if (threadIdx.x == 0) device::heap_release(gst, call, p);
  device::enter_rank_call(gst.ctx, call);
}

// (rank), every rank of `comm`, in the same order, as dcuda_win_create. Takes `size` bytes from
// each rank's heap and makes them a window of `comm`: `*base` is the caller's part (uncleared),
// `*win` the handle. Where all window slots are in use, `*win` is DCUDA_WIN_NONE, `*base` null and
// the memory is given back. dcuda_win_free frees the window and its memory.
__device__ inline void dcuda_win_allocate(dcuda_state& gst, dcuda_comm comm, int size, void** base,
                                          dcuda_win* win) {
  using namespace dcuda;
  constexpr protocol::call call = protocol::call::win_allocate;
  if (threadIdx.x == 0 && size < 0) {
    device::fail(gst.ctx, gst.world_rank, call, protocol::error_code::negative_size, size);
  }
  device::allocate_window(gst, call, comm, static_cast<std::uint64_t>(size < 0 ? 0 : size), base,
                          win);
}
