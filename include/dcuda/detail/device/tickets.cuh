// Tickets of the peer rings and of the command channel, taken by thread 0 of a rank.
#pragma once

#include <cstdint>

#include "dcuda/detail/device/memory_order.cuh"
#include "dcuda/detail/device/ptx_instructions.cuh"

namespace dcuda::device {

// A ticket thread 0 takes ahead of a call's entry barrier, so that the atomic's round trip
// overlaps the barrier and the argument checks: of a peer ring (detail/device/peer_ring.cuh;
// `seen`: how far the target had taken the ring) or of the command channel
// (detail/device/channel_send.cuh; `seen`: the consumer's position as this GPU's cached copy
// showed it). The route it was taken for says which. A ticket taken is always used, or the checks
// stop the run: an entry or record left empty would stall its reader.
struct held_ticket {
  std::uint32_t ticket;
  std::uint32_t seen;
  bool held;          // false: none taken yet
  bool ring = false;  // of a peer ring (otherwise of the command channel)
};

// The increment of a ticket atomic that takes `tickets` tickets, written as laneid + tickets
// (`tickets` on lane 0, the only lane that takes them): with an operand the same on every lane,
// ptxas combines the atomics of a warp into one and shuffles the result to the lanes right away,
// which makes the warp wait for the atomic where it is issued (before the entry barrier) instead
// of where its result is used.
__device__ inline std::uint32_t lane_ticket_increment(std::uint32_t tickets) {
  return lane_id() + tickets;
}

// The ticket atomic of a peer ring or of the command channel (thread 0): the counter's value
// before this rank's increment, the first of `tickets` consecutive tickets.
__device__ inline std::uint32_t take_ticket_from(std::uint32_t* counter,
                                                 std::uint32_t tickets = 1u) {
  return atomic_add_relaxed_gpu_u32(counter, lane_ticket_increment(tickets));
}

}  // namespace dcuda::device
