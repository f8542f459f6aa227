// How a rank reaches a target rank: the route (protocol/routes.h) and where to notify it, from
// the route table or from the route caches in dcuda_state.
#pragma once

#include "dcuda/detail/device/communicators.cuh"
#include "dcuda/detail/device/peer_ring.cuh"
#include "dcuda/detail/protocol/notification_counters.h"

namespace dcuda::device {

// How to reach a world rank: this GPU's ranks without a load, others from the route table.
struct target_route {
  std::uint32_t* counters;  // this GPU's ranks
  protocol::route path;
  ring_address ring;  // ranks on other GPUs of the node
};
__device__ inline target_route route_to(const dcuda_state& gst, int world_rank) {
  if (on_this_device(gst, world_rank)) {
    return {gst.notifications +
                protocol::counter_index(static_cast<std::uint32_t>(world_rank - gst.rank_start), 0),
            protocol::route::local,
            {}};
  }
  const protocol::rank_route r = gst.rank_routes[world_rank];
  return {r.counters, static_cast<protocol::route>(r.path), {r.ring, r.slot}};
}

__device__ inline target_route cached_target_route(const dcuda_cached_route& cache) {
  return {cache.counters, static_cast<protocol::route>(cache.path), {cache.ring, cache.ring_slot}};
}
__device__ inline void cache_target_route(dcuda_cached_route& cache, int world_rank,
                                          const target_route& to) {
  cache.target = world_rank;
  cache.path = static_cast<std::uint32_t>(to.path);
  cache.counters = to.counters;
  cache.ring = to.ring.ring;
  cache.ring_slot = to.ring.slot;
}

// The world rank of `rank` in a window's communicator (`on_world`: DCUDA_COMM_WORLD), from state
// values already loaded. A window's communicator never changes, so the same window and rank
// argument always give the same target: plan_put keys the route cache on those two alone.
__device__ inline int window_target_rank(bool on_world, int rank, int rank_start) {
  return on_world
             ? rank
             : static_cast<int>(static_cast<unsigned>(rank) + static_cast<unsigned>(rank_start));
}

}  // namespace dcuda::device
