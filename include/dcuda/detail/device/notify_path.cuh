// A notification on its way from thread 0 of the sender: a release reduction on a counter of
// this GPU, a record in a peer GPU's ring, or a compact entry to the host proxy (the network).
#pragma once

#include "dcuda/detail/device/memory_order.cuh"
#include "dcuda/detail/device/peer_ring.cuh"
#include "dcuda/detail/device/remote_send.cuh"
#include "dcuda/detail/device/target_route.cuh"

namespace dcuda::device {

// route_to for dcuda_notify, thread 0 only: from the route of the last notify's target (no
// global load when it notifies the same rank again), which it then remembers. The notify route
// is thread 0's alone, like everything dcuda_notify does, so no barrier guards it.
__device__ inline target_route notify_route_to(dcuda_state& gst, int world_rank) {
  if (world_rank == gst.notify_route_cache.target) {
    return cached_target_route(gst.notify_route_cache);
  }
  const target_route to = route_to(gst, world_rank);
  cache_target_route(gst.notify_route_cache, world_rank, to);
  return to;
}

// Thread 0 counts one notification at a target of this GPU. Must follow a block barrier so that
// the release covers every thread's stores (PTX release is cumulative over what the barrier
// ordered before it). A reduction, not an atomic: the sender needs no answer, so it does not wait
// for one.
__device__ inline void signal_local_rank(std::uint32_t* counters, int tag) {
  red_release_gpu_increment_u32(counters + tag);
}

// Thread 0 notifies a target on this GPU (counter) or on another GPU of the node (a record
// without a payload in its ring, with the ticket taken early if one is held). `data_before`: this
// call stored data to the target that the record must not overtake.
__device__ inline void notify_along(dcuda_state& gst, protocol::call call, const target_route& to,
                                    int tag, bool data_before, held_ticket early = {}) {
  if (threadIdx.x != 0) return;
  if (to.path == protocol::route::local) {
    signal_local_rank(to.counters, tag);
    return;
  }
  send_ring_notification(gst, call, to.ring.ring, to.ring.slot, tag, data_before, early.ticket,
                         early.seen, early.held);
}

// Thread 0, before dcuda_notify's entry barrier: the ticket of the latency path, taken early as
// plan_put takes a put's, when it notifies the rank the last notify went to (none otherwise).
__device__ inline held_ticket early_notify_ticket(const dcuda_state& gst, int target) {
  if (threadIdx.x != 0) return {};
  const int notify_target = owner_read(gst.notify_route_cache.target);
  const std::uint32_t notify_path = owner_read(gst.notify_route_cache.path);
  const std::uint32_t ring_slot = owner_read(gst.notify_route_cache.ring_slot);
  if (target != notify_target) return {};
  if (notify_path == static_cast<std::uint32_t>(protocol::route::peer)) {
    return take_ring_ticket(gst, ring_slot);
  }
  if (notify_path == static_cast<std::uint32_t>(protocol::route::network)) {
    return take_channel_ticket(gst.commands);
  }
  return {};
}

}  // namespace dcuda::device
