// The window slots of a rank (protocol/window_table.h): the checks every window operation makes
// on its handle, and dcuda_win_create over DCUDA_COMM_WORLD across processes.
#pragma once

#include "dcuda/detail/device/barriers.cuh"
#include "dcuda/detail/device/communicators.cuh"
#include "dcuda/detail/device/log_channel.cuh"
#include "dcuda/detail/protocol/heap_layout.h"
#include "dcuda/device/handles.cuh"

namespace dcuda::device {

__device__ inline protocol::window_entry& window_of(const dcuda_state& gst, int slot,
                                                    int world_rank) {
  return gst.windows[protocol::window_index(slot, static_cast<std::uint32_t>(world_rank),
                                            static_cast<std::uint32_t>(gst.world_size))];
}

// Whether `win` is a device window the caller holds.
__device__ inline bool holds_window(const dcuda_state& gst, dcuda_win win) {
  const int slot = protocol::window_slot(win);
  return protocol::window_handle_well_formed(win) && (gst.windows_in_use & (1u << slot)) != 0u &&
         gst.generation[slot] == protocol::window_generation(win);
}

// Fails unless `win` is a window the caller holds; returns its slot.
__device__ inline int checked_window_slot(const dcuda_state& gst, protocol::call call,
                                          dcuda_win win) {
  if (!holds_window(gst, win)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::bad_window, win);
  }
  return protocol::window_slot(win);
}

__device__ inline dcuda_comm window_comm(const dcuda_state& gst, int slot) {
  return (gst.world_windows >> slot) & 1u ? DCUDA_COMM_WORLD : DCUDA_COMM_DEVICE;
}

// Logged once (by world rank 0) when dcuda_win_create runs out of slots.
__device__ inline void log_windows_exhausted(dcuda_state& gst) {
  static_assert(protocol::max_windows == 32 && protocol::heap_slot == 31,
                "keep the message below in step");
  send_log_literal(gst,
                   "dcuda_win_create: all 31 window slots are in use (a 32nd holds the heaps); "
                   "returning DCUDA_WIN_NONE");
}

// dcuda_win_create on DCUDA_COMM_WORLD with other processes: the slot must be free on every GPU
// (windows of DCUDA_COMM_DEVICE take slots on one GPU only), so the proxies agree on it and on
// its generation, and write every rank's entry into each GPU's table (peer entries mapped into
// this GPU's address space). Each rank offers its memory through mapped host memory first.
__device__ inline void create_world_window(dcuda_state& gst, void* winbase, int size,
                                           dcuda_win* win) {
  if (threadIdx.x == 0) {
    volatile protocol::window_offer& offer = gst.ctx->window_offers[gst.device_rank];
    offer.base = reinterpret_cast<std::uint64_t>(winbase);
    offer.size = static_cast<std::uint64_t>(size);
  }
  world_collective(gst, protocol::call::win_create, gst.windows_in_use, -1);
  if (threadIdx.x == 0) {
    const volatile protocol::world_collective_result& result = *gst.ctx->collective_result;
    const int slot = result.slot;
    if (slot >= 0) {
      gst.generation[slot] = result.generation;
      gst.ring_window[slot] = {reinterpret_cast<std::uint64_t>(winbase),  // records land here
                               static_cast<std::uint32_t>(size), 0};
      gst.windows_in_use |= 1u << slot;
      gst.world_windows |= 1u << slot;
      gst.ring_windows |= 1u << slot;
    }
    gst.broadcast = slot;
  }
  __syncthreads();
  const int slot = gst.broadcast;
  *win = slot >= 0 ? protocol::encode_window(slot, gst.generation[slot]) : DCUDA_WIN_NONE;
  if (slot < 0 && gst.world_rank == 0 && threadIdx.x == 0) log_windows_exhausted(gst);
}

}  // namespace dcuda::device
