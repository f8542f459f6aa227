// A notification on its way from thread 0 of the sender: a release reduction on a counter of
// this GPU, a record in a peer GPU's ring, or a compact entry to the host proxy (the network).
#pragma once

#include "dcuda/detail/device/code_generation.cuh"
#include "dcuda/detail/device/memory_order.cuh"
#include "dcuda/detail/device/peer_ring.cuh"
#include "dcuda/detail/device/remote_send.cuh"
#include "dcuda/detail/device/target_route.cuh"

namespace dcuda::device {

// Thread 0 counts one notification at a target of this GPU. Must follow a block barrier so that
// the release covers every thread's stores (PTX release is cumulative over what the barrier
// ordered before it). A reduction, not an atomic: the sender needs no answer, so it does not wait
// for one.
__device__ inline void signal_local_rank(std::uint32_t* counters, int tag) {
  red_release_gpu_increment_u32(counters + tag);
}

// Thread 0 notifies a target on this GPU (counter) or on another GPU of the node (a record
// without a payload in its ring, with the ticket taken early if one is held, or a count in its
// ring's counters: send_ring_notification). `data_before`: this call stored data to the target
// that the notification must not overtake.
__device__ inline void notify_along(dcuda_state& gst, protocol::call call, const target_route& to,
                                    int tag, bool data_before, held_ticket early = {}) {
  if (threadIdx.x != 0) return;
  if (to.path == protocol::route::local) {
    signal_local_rank(to.counters, tag);
    return;
  }
  send_ring_notification(gst, call, to.ring.ring, to.ring.slot, tag, data_before, early.ticket,
                         early.seen, early.held, early.ring);
}

// The slow part of plan_notify: stops the run with the precise complaint about a notify's
// communicator, tag or rank (the checks in their order), or, when they are right, fills the notify
// route cache for the target from the route table. Out of line, so that its checks, loads and
// arithmetic share no registers with the notify's fast path.
__device__ __noinline__ inline void refresh_notify_route(dcuda_state& gst, protocol::call call,
                                                         int rank, dcuda_comm comm, int tag) {
  check_comm(gst, call, comm);
  check_tag(gst, call, tag);
  check_rank(gst, call, comm, rank);
  const int target = world_rank_of(gst, comm, rank);
  cache_target_route(gst.notify_route_cache, target, route_to(gst, target));
}

// Thread 0, before dcuda_notify's entry barrier (dcuda_notify_thread has none; `call` says which):
// checks the arguments, leaves the target's route in the notify route cache (from the route table
// only when the target changed), and takes the ticket of a latency path (a peer ring or the command
// channel; none for a rank of this GPU), whose atomic's round trip then overlaps the barrier. After
// the barrier only the notification is left, along the route in the cache. The other threads wait
// at the barrier for this work, so it is on the latency path: every field is read at once
// (volatile, so that none is sunk into a branch) and one branch tests the arguments and the cache's
// hit. The notify route is thread 0's alone, like everything dcuda_notify does, so no barrier
// guards it.
__device__ inline held_ticket plan_notify(dcuda_state& gst, protocol::call call, int rank,
                                          dcuda_comm comm, int tag) {
  const int comm_ranks = comm_size(gst, comm);
  const int target = world_rank_of(gst, comm, rank);
  const int cached_target = owner_read(gst.notify_route_cache.target);
  std::uint32_t path = owner_read(gst.notify_route_cache.path);
  std::uint32_t ring_slot = owner_read(gst.notify_route_cache.ring_slot);
  const bool good = valid_comm(comm) &
                    (static_cast<unsigned>(tag) < static_cast<unsigned>(protocol::tag_count)) &
                    (static_cast<unsigned>(rank) < static_cast<unsigned>(comm_ranks));
  // Bitwise: both halves are computed, and tested with one branch.
  if (!good | (target != cached_target)) {
    refresh_notify_route(gst, call, rank, comm, tag);
    path = owner_read(gst.notify_route_cache.path);
    ring_slot = owner_read(gst.notify_route_cache.ring_slot);
  }
  if (path == static_cast<std::uint32_t>(protocol::route::peer)) {
    return take_ring_ticket(gst, ring_slot);
  }
  if (path == static_cast<std::uint32_t>(protocol::route::network)) {
    return take_channel_ticket(gst.commands);
  }
  return {};
}

// Thread 0, after dcuda_notify's entry barrier: the notification along the route plan_notify
// left in the cache, whose fields are read at once. `early`: plan_notify's ticket.
__device__ inline void notify_planned(dcuda_state& gst, protocol::call call, int tag,
                                      held_ticket early) {
  const target_route to{
      owner_read(gst.notify_route_cache.counters),
      static_cast<protocol::route>(owner_read(gst.notify_route_cache.path)),
      {owner_read(gst.notify_route_cache.ring), owner_read(gst.notify_route_cache.ring_slot)}};
  if (to.path == protocol::route::network) {
    send_operation_alone(gst, call,
                         operation_of(gst, protocol::operation_kind::notify,
                                      gst.notify_route_cache.target, -1, 0, 0, tag),
                         nullptr, early);
    return;
  }
  notify_along(gst, call, to, tag, false, early);
}

}  // namespace dcuda::device
