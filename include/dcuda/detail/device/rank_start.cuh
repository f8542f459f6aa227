// What dcuda_gpu_init sets up in the rank's dcuda_state, and what dcuda_gpu_finish tells the host.
#pragma once

#include "dcuda/detail/device/spin_wait.cuh"
#include "dcuda/detail/protocol/heap_layout.h"
#include "dcuda/detail/protocol/routes.h"
#include "dcuda/device/handles.cuh"
#include "dcuda/device/state.cuh"

namespace dcuda::device {

// Thread 0: the access cache of the gets and atomics (global_access_path.cuh) emptied, so that
// nothing hits it: DCUDA_WIN_NONE, which a hit never matches, rank -1, size 0.
__device__ inline void empty_access_cache(dcuda_state& gst) {
  gst.access_window = DCUDA_WIN_NONE;
  gst.access_rank = -1;
  gst.access_base = 0;
  gst.access_size = 0;
}

__device__ inline dcuda_cached_route empty_route_cache() {
  return {-1, static_cast<std::uint32_t>(protocol::route::local), nullptr, nullptr, 0, 0};
}

// Fills `gst` from the context (the copies of the context fields the calls need) and empties its
// counts, caches and rings' heads: thread 0 the single fields, every thread a share of the
// arrays. Ends with a block barrier. Called by every thread of the rank, after the entry barrier.
__device__ inline void start_rank_state(dcuda_context* dcuda, dcuda_state& gst, int world_rank) {
  if (threadIdx.x == 0) {
    gst.ctx = dcuda;
    gst.notifications = dcuda->device_notifications;
    gst.windows = dcuda->windows;
    gst.rank_routes = dcuda->rank_routes;
    gst.commands = dcuda->commands;
    gst.uses_network = dcuda->uses_network;
    gst.node_barrier = dcuda->node_barrier;
    gst.device_rank = static_cast<std::int32_t>(blockIdx.x);
    gst.world_rank = world_rank;
    gst.rank_start = dcuda->rank_start;
    gst.world_size = dcuda->world_size;
    gst.device_ranks = dcuda->device_ranks;
    gst.process_count = dcuda->process_count;
    gst.barrier_episode = 0;
    // The heaps' window (protocol/heap_layout.h) is there from the start, in its reserved slot:
    // the host has written every rank's entry, and records from peer GPUs land in this rank's
    // segment.
    constexpr std::uint32_t heap_bit = 1u << protocol::heap_slot;
    gst.windows_in_use = heap_bit;
    gst.world_windows = heap_bit;
    gst.ring_windows = dcuda->heap_order != 0u ? heap_bit : 0u;  // records land in the heaps
    gst.allocated_windows = 0;
    const bool heaps = dcuda->heap_order != 0u;
    gst.heap = heaps ? dcuda->heaps + blockIdx.x : nullptr;
    gst.heap_segment =
        heaps ? dcuda->heap + (static_cast<std::uint64_t>(blockIdx.x) << dcuda->heap_order)
              : nullptr;
    // Both route caches start empty, every field set: should a call with a target argument of
    // -1 match the empty cache before its checks run, it finds the local route, which takes no
    // ticket (notify_path.cuh, plan_notify).
    gst.cached_window = DCUDA_WIN_NONE;
    gst.cached_rank = -1;
    gst.put_route_cache = empty_route_cache();
    gst.cached_target_base = 0;
    gst.cached_target_size = 0;
    gst.cached_own_base = 0;
    gst.cached_own_size = 0;
    gst.notify_route_cache = empty_route_cache();
    empty_access_cache(gst);
    gst.acks_requested = 0;
    gst.acks_awaited = 0;
    gst.world_collectives = 0;
    gst.waits_published = 0;
    gst.record_writes = 0;
    gst.broadcast = 0;
    const bool host_windows = dcuda->host_notifications != nullptr;
    const std::size_t host_row = static_cast<std::size_t>(blockIdx.x) * protocol::tag_count;
    gst.host_counters = host_windows ? dcuda->host_notifications + host_row : nullptr;
    gst.host_taken = host_windows ? dcuda->host_notifications_taken + host_row : nullptr;
    gst.ring_peers = dcuda->ring_peers;
    gst.ring_counts = dcuda->ring_counts;
    gst.peer_fence_owed = 0;
    gst.peer_acquire_owed = 0;
    if (dcuda->ring_peers != 0u) {
      const protocol::ring_memory_layout layout{static_cast<std::uint32_t>(dcuda->device_ranks),
                                                dcuda->ring_peers, dcuda->ring_slots};
      gst.rings = dcuda->ring_memory + layout.ring(blockIdx.x, 0);
      gst.ring_tails = reinterpret_cast<std::uint32_t*>(dcuda->ring_memory + layout.tails());
      gst.ring_taken_here =
          reinterpret_cast<const std::uint32_t*>(dcuda->ring_memory + layout.taken());
      for (std::uint32_t peer = 0; peer < dcuda->ring_peers; ++peer) {
        gst.ring_taken[peer] = dcuda->ring_taken[peer] + blockIdx.x;
      }
    }
  }
  for (int i = static_cast<int>(threadIdx.x); i < protocol::tag_count; i += blockDim.x) {
    gst.consumed[i] = 0;
    gst.counter_acquired[i] = 0;
  }
  for (int i = static_cast<int>(threadIdx.x); i < static_cast<int>(protocol::max_peer_gpus);
       i += blockDim.x) {
    gst.ring_head[i] = 0;
  }
  // Generations start where this run's do (dcuda_context::first_window_generation), so that a
  // handle kept from an earlier run is refused rather than taken for this run's window.
  for (int i = static_cast<int>(threadIdx.x); i < protocol::max_windows; i += blockDim.x) {
    // Without heaps the slot stays reserved with no generation: DCUDA_WIN_HEAP is then refused
    // as a window this rank does not hold.
    const bool heap = i == protocol::heap_slot;
    gst.generation[i] = !heap                     ? dcuda->first_window_generation
                        : dcuda->heap_order != 0u ? protocol::heap_generation
                                                  : 0u;
    gst.ring_window[i] = {0, 0, 0};
    if (heap && dcuda->heap_order != 0u) {
      const std::uint64_t segment = std::uint64_t{1} << dcuda->heap_order;
      gst.ring_window[i] = {reinterpret_cast<std::uint64_t>(dcuda->heap) + blockIdx.x * segment,
                            static_cast<std::uint32_t>(segment), 0};
    }
  }
  __syncthreads();
}

// Thread 0, at the end of dcuda_gpu_finish: counts the rank as finished (the delivery agent
// leaves when all have) and shows it as finished in the watchdog's reports.
__device__ inline void mark_rank_finished(dcuda_state& gst) {
  protocol::device_atomic<std::uint32_t>(*gst.ctx->finished_ranks)
      .fetch_add(1u, cuda::memory_order_relaxed);
  write_wait_record(
      gst, wait_description{protocol::call::gpu_finish, protocol::wait_kind::finished, 0, 0}, 0,
      gst.waits_published);
}

}  // namespace dcuda::device
