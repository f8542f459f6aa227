// dcuda_win_create / dcuda_win_free (thesis listing 3.5). (rank): all threads of the rank call it
// together.
#pragma once

#include "dcuda/device/handles.cuh"
#include "dcuda/device/log.cuh"
#include "dcuda/device/rank.cuh"
#include "dcuda/detail/device/heap_blocks.cuh"
#include "dcuda/detail/device/window_slots.cuh"

// (rank), every rank of `comm`, in the same order. Exposes `size` bytes at `winbase` to puts from
// the ranks of `comm` and gives the handle in `*win`, the same in every thread of every rank;
// DCUDA_WIN_NONE (logged once by world rank 0) when all window slots are in use. Ends with a
// barrier: every rank's window is visible to all when it returns.
__device__ inline void dcuda_win_create(dcuda_state& gst, dcuda_comm comm, void* winbase, int size,
                                        dcuda_win* win) {
  using namespace dcuda;
  device::enter_rank_call(gst.ctx, protocol::call::win_create);
  device::check_comm(gst, protocol::call::win_create, comm);
  if (size < 0) {
    device::fail(gst.ctx, gst.world_rank, protocol::call::win_create,
                 protocol::error_code::negative_size, size);
  }
  if (winbase == nullptr && size > 0) {
    device::fail(gst.ctx, gst.world_rank, protocol::call::win_create,
                 protocol::error_code::null_window_base, 0, size);
  }
  if (comm == DCUDA_COMM_WORLD && gst.process_count > 1) {
    device::create_world_window(gst, winbase, size, win);
    return;
  }
  // Every rank makes the same sequence of collective window calls, so every rank finds the same
  // free slot in its own mask: the handle needs no exchange. Thread 0 alone reads and updates the
  // mask; the others learn the slot through gst.broadcast after the barrier.
  if (threadIdx.x == 0) {
    const int slot = protocol::lowest_free_slot(gst.windows_in_use);
    gst.broadcast = slot;
    if (slot >= 0) {
      const std::uint32_t generation = protocol::next_generation(gst.generation[slot]);
      gst.generation[slot] = generation;
      gst.windows_in_use |= 1u << slot;
      gst.world_windows = comm == DCUDA_COMM_WORLD ? gst.world_windows | (1u << slot)
                                                   : gst.world_windows & ~(1u << slot);
      protocol::window_entry& entry = device::window_of(gst, slot, gst.world_rank);
      entry.base = reinterpret_cast<std::uint64_t>(winbase);
      entry.size = static_cast<std::uint64_t>(size);
      entry.comm = comm;
      entry.generation = generation;  // published to other ranks by the barrier's release
    }
  }
  device::device_barrier(gst, protocol::call::win_create);
  const int slot = gst.broadcast;
  *win = slot >= 0 ? protocol::encode_window(slot, gst.generation[slot]) : DCUDA_WIN_NONE;
  if (slot < 0 && gst.world_rank == 0 && threadIdx.x == 0) {  // all fail alike; one line says why
    device::log_windows_exhausted(gst);
  }
}

// (rank), every rank of the window's communicator. A barrier (across processes: after everything
// the network still carries to the window has landed), then the handle is invalid on every rank,
// even after a new window reuses its slot.
__device__ inline void dcuda_win_free(dcuda_state& gst, dcuda_win win) {
  using namespace dcuda;
  device::enter_rank_call(gst.ctx, protocol::call::win_free);
  const int slot = device::checked_window_slot(gst, protocol::call::win_free, win);
  if (slot == protocol::heap_slot) {
    device::refuse_heap_free(gst, protocol::call::win_free, dcuda_gptr{gst.world_rank, win, 0},
                             protocol::heap_free_refusal::heap_window_free);
  }
  // After this barrier no rank is inside a put to this window (device-local and peer puts
  // complete before they return; across processes the collective waits for what the network
  // still carries), so the entry can be cleared.
  if (device::window_comm(gst, slot) == DCUDA_COMM_WORLD && gst.process_count > 1) {
    device::world_collective(gst, protocol::call::win_free, 0, slot);
    device::settle_rings(gst);  // payloads carried in records land while the window exists
  } else {
    device::device_barrier(gst, protocol::call::win_free);
  }
  if (threadIdx.x == 0) {
    device::window_of(gst, slot, gst.world_rank).generation = 0;
    gst.windows_in_use &= ~(1u << slot);
    gst.ring_windows &= ~(1u << slot);
    if (protocol::window_slot(gst.cached_window) == slot) gst.cached_window = DCUDA_WIN_NONE;
    if (protocol::window_slot(gst.access_window) == slot) device::empty_access_cache(gst);
    if (((gst.allocated_windows >> slot) & 1u) != 0u) {
      device::release_allocated_part(gst, protocol::call::win_free, slot, win);
    }
  }
  __syncthreads();
}
