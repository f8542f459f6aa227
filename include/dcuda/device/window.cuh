// dcuda_win_create / dcuda_win_free (thesis listing 3.5) and the checks every window operation
// makes on its handle.
#pragma once

#include "dcuda/device/log.cuh"
#include "dcuda/device/rank.cuh"

using dcuda_win = int;
#define DCUDA_WIN_NONE (-1)

namespace dcuda::device {

__device__ inline protocol::window_entry& window_of(const dcuda_state& gst, int slot,
                                                    int world_rank) {
  return gst.windows[protocol::window_index(slot, static_cast<std::uint32_t>(world_rank),
                                            static_cast<std::uint32_t>(gst.world_size))];
}

// Fails unless `win` is a window the caller holds; returns its slot.
__device__ inline int checked_window_slot(const dcuda_state& gst, protocol::call call,
                                          dcuda_win win) {
  const int slot = protocol::window_slot(win);
  if (!protocol::window_handle_well_formed(win) || (gst.windows_in_use & (1u << slot)) == 0u ||
      gst.generation[slot] != protocol::window_generation(win)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::bad_window, win);
  }
  return slot;
}

__device__ inline dcuda_comm window_comm(const dcuda_state& gst, int slot) {
  return (gst.world_windows >> slot) & 1u ? DCUDA_COMM_WORLD : DCUDA_COMM_DEVICE;
}

// Logged once (by world rank 0) when dcuda_win_create runs out of slots.
__device__ inline void log_windows_exhausted(dcuda_state& gst) {
  static_assert(protocol::max_windows == 32, "keep the message below in step");
  send_log_literal(gst,
                   "dcuda_win_create: all 32 window slots are in use; returning DCUDA_WIN_NONE");
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
      gst.own_window_base[slot] = reinterpret_cast<std::uint64_t>(winbase);  // records land here
      gst.windows_in_use |= 1u << slot;
      gst.world_windows |= 1u << slot;
    }
    gst.broadcast = slot;
  }
  __syncthreads();
  const int slot = gst.broadcast;
  *win = slot >= 0 ? protocol::encode_window(slot, gst.generation[slot]) : DCUDA_WIN_NONE;
  if (slot < 0 && gst.world_rank == 0 && threadIdx.x == 0) log_windows_exhausted(gst);
}

}  // namespace dcuda::device

__device__ inline void dcuda_win_create(dcuda_state& gst, dcuda_comm comm, void* winbase, int size,
                                        dcuda_win* win) {
  using namespace dcuda;
  device::enter_collective(gst.ctx, protocol::call::win_create);
  device::check_comm(gst, protocol::call::win_create, comm);
  if (size < 0) {
    device::fail(gst.ctx, gst.world_rank, protocol::call::win_create,
                 protocol::error_code::negative_size, size);
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

__device__ inline void dcuda_win_free(dcuda_state& gst, dcuda_win win) {
  using namespace dcuda;
  device::enter_collective(gst.ctx, protocol::call::win_free);
  const int slot = device::checked_window_slot(gst, protocol::call::win_free, win);
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
    if (protocol::window_slot(gst.cached_window) == slot) gst.cached_window = DCUDA_WIN_NONE;
  }
  __syncthreads();
}
