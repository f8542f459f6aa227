// The sender's side of the peer rings (protocol/peer_ring.h): one record to a rank on another GPU
// of the node. Thread 0 of a rank only.
#pragma once

#include "device/ring_poll.cuh"
#include "device/spin_wait.cuh"
#include "device/state.cuh"
#include "protocol/peer_ring.h"

namespace dcuda::device {

// What a sender needs about a target on another GPU of the node (from its rank_route).
struct ring_address {
  char* ring;          // the target's ring for this GPU, mapped
  std::uint32_t slot;  // the target in this GPU's tails and taken
};

// Sends one record to a rank on another GPU of the node. `size` payload bytes (at most
// protocol::ring_payload_limit) travel in it; `fence`: the rank's earlier stores to peer GPUs
// must be visible before the record (data of a regular put). Thread 0 only. Waits while the
// target has 256 records from this GPU untaken, taking its own records meanwhile, so two ranks
// that flood each other both go on.
namespace ring_detail {
__device__ inline std::uint32_t gather_payload(const void* buffer, int size) {
  const auto* bytes = static_cast<const unsigned char*>(buffer);
  std::uint32_t payload = 0;
  for (int i = 0; i < size; ++i) payload |= std::uint32_t{bytes[i]} << (8 * i);
  return payload;
}
}  // namespace ring_detail

// The target has 256 of this GPU's records untaken: waits, taking this rank's own records
// meanwhile. Out of line (rare, and its registers would burden every put).
__device__ __noinline__ inline void wait_for_ring_room(dcuda_state& gst, protocol::call call,
                                                       std::uint32_t slot, std::uint32_t ticket,
                                                       const std::uint32_t* taken) {
  spin_until(gst,
             wait_description{call, protocol::wait_kind::ring_room, static_cast<std::int32_t>(slot),
                              ticket},
             [&](std::uint32_t& seen) {
               drain_rings(gst);
               seen = ring_detail::load_relaxed_system(taken);
               return protocol::ring_has_room(ticket, seen);
             });
}

__device__ inline void send_ring_record(dcuda_state& gst, protocol::call call, char* ring,
                                        std::uint32_t slot, const protocol::ring_record& record,
                                        bool fence) {
  using namespace ring_detail;
  if (fence || gst.peer_fence_owed != 0u) {
    asm volatile("fence.acq_rel.sys;" ::: "memory");
    gst.peer_fence_owed = 0;
  }
  // The load of `taken` is issued before the ticket's atomic, so the two are in flight together.
  const std::uint32_t* taken = gst.ring_taken_here + slot;
  const std::uint32_t taken_seen = load_relaxed_system(taken);
  std::uint32_t ticket;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;"
               : "=r"(ticket)
               : "l"(gst.ring_tails + slot)
               : "memory");
  if (!protocol::ring_has_room(ticket, taken_seen)) {
    wait_for_ring_room(gst, call, slot, ticket, taken);
  }
  const protocol::ring_words words = protocol::encode_ring_record(record, ticket);
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(
                   ring + protocol::ring_slot(ticket) * protocol::ring_record_bytes),
               "l"(words.first), "l"(words.second)
               : "memory");
}

// A notification to a rank on another GPU of the node, `carried_size` payload bytes (from
// `carried`) travelling in its record. Out of line: one copy serves every call site, which keeps
// the registers of the kernels that call dcuda low. Scalars only: an argument passed by reference
// would go through local memory.
__device__ __noinline__ inline void send_ring_notification(dcuda_state& gst, protocol::call call,
                                                           char* ring, std::uint32_t slot, int tag,
                                                           bool data_before, const void* carried,
                                                           int carried_size, int offset,
                                                           int window_slot) {
  const protocol::ring_record record{
      carried_size == 0 ? 0u : ring_detail::gather_payload(carried, carried_size),
      static_cast<std::uint32_t>(offset), static_cast<std::uint8_t>(tag),
      static_cast<std::uint8_t>(window_slot), static_cast<std::uint8_t>(carried_size)};
  send_ring_record(gst, call, ring, slot, record, data_before);
}

}  // namespace dcuda::device
