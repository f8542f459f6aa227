// The sender's side of the peer rings (protocol/peer_ring.h): one record to a rank on another GPU
// of the node. Thread 0 of a rank only.
#pragma once

#include "dcuda/detail/device/ring_poll.cuh"
#include "dcuda/detail/device/spin_wait.cuh"
#include "dcuda/detail/device/tickets.cuh"
#include "dcuda/device/state.cuh"
#include "dcuda/detail/protocol/peer_ring.h"

namespace dcuda::device {

// What a sender needs about a target on another GPU of the node (from its rank_route).
struct ring_address {
  char* ring;          // the target's ring for this GPU, mapped
  std::uint32_t slot;  // the target in this GPU's tails and taken
};

namespace ring_detail {
// A payload of 1, 2, 4 or 8 bytes aligned to its size (a scalar) is one load; any other, bytes
// loaded independently (no chain of dependent loads).
__device__ inline std::uint64_t gather_payload(const void* buffer, int size) {
  const auto address = reinterpret_cast<std::uintptr_t>(buffer);
  if (size == 4 && (address & 3u) == 0u) return *static_cast<const std::uint32_t*>(buffer);
  if (size == 8 && (address & 7u) == 0u) return *static_cast<const std::uint64_t*>(buffer);
  if (size == 2 && (address & 1u) == 0u) return *static_cast<const std::uint16_t*>(buffer);
  if (size == 1) return *static_cast<const std::uint8_t*>(buffer);
  const auto* bytes = static_cast<const unsigned char*>(buffer);
  std::uint64_t payload = 0;
#pragma unroll
  for (int i = 0; i < protocol::record_payload_bytes; ++i) {
    if (i < size) payload |= std::uint64_t{bytes[i]} << (8 * i);
  }
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
               seen = load_relaxed_sys_u32(taken);
               return protocol::ring_has_room(ticket, seen);
             });
}

// Takes the next `tickets` tickets of the target's ring (`slot`: the target in this GPU's tails
// and taken): a record and its continuation slots. The load of `taken` is issued before the
// atomic, so the two are in flight together. Thread 0 only.
__device__ inline held_ticket take_ring_ticket(const std::uint32_t* taken_here,
                                               std::uint32_t* tails, std::uint32_t slot,
                                               std::uint32_t tickets = 1u) {
  held_ticket taken;
  taken.seen = load_relaxed_sys_u32(taken_here + slot);
  taken.ticket = take_ticket_from(tails + slot, tickets);
  taken.held = true;
  taken.ring = true;
  return taken;
}
__device__ inline held_ticket take_ring_ticket(const dcuda_state& gst, std::uint32_t slot) {
  return take_ring_ticket(gst.ring_taken_here, gst.ring_tails, slot);
}

// Instead of a ticket, for a put_notify that may count its notification without a record: the
// ring's tail (this GPU's next ticket for the target, read after this rank's own tickets) and how
// far the target has taken the ring, both loads in flight together (held false, ring true).
// Whether they are equal (protocol::ring_fully_taken) is known by the time the data is fenced.
__device__ inline held_ticket peek_ring_tail(const std::uint32_t* taken_here,
                                             const std::uint32_t* tails, std::uint32_t slot) {
  held_ticket peeked;
  peeked.seen = load_relaxed_sys_u32(taken_here + slot);
  peeked.ticket = load_relaxed_gpu_u32(tails + slot);
  peeked.held = false;
  peeked.ring = true;
  return peeked;
}

// The record with `ticket` in the target's ring, whose slot has room: one 16-byte store.
__device__ inline void write_ring_record(char* ring, std::uint32_t ticket,
                                         const protocol::ring_record& record) {
  const protocol::ring_words words = protocol::encode_ring_record(record, ticket);
  store_relaxed_sys_v2_u64(ring + protocol::ring_slot(ticket) * protocol::ring_record_bytes,
                           words.first, words.second);
}

// Waits, when `ticket` showed no room in the ring of target `slot`, until there is.
__device__ inline void ensure_ring_room(dcuda_state& gst, protocol::call call, std::uint32_t slot,
                                        const held_ticket& ticket) {
  if (!protocol::ring_has_room(ticket.ticket, ticket.seen)) {
    wait_for_ring_room(gst, call, slot, ticket.ticket, gst.ring_taken_here + slot);
  }
}

// Tickets a put_notify to another GPU takes for its record (plan_put, before the entry barrier):
// one, plus the continuation slots of a payload the ring carries (at most
// protocol::ring_carry_limit bytes, and no fence owed: carried bytes follow no fence).
__device__ inline std::uint32_t put_notify_tickets(int size, bool fence_owed) {
  const bool carried = !fence_owed && size <= protocol::ring_carry_limit;
  return 1u + (carried ? protocol::continuation_slots(static_cast<std::uint32_t>(size)) : 0u);
}

// Sends `record` in the target's ring once no fence is owed: the ticket (taken here when none is
// held), room in the ring, the record.
__device__ inline void store_ring_record(dcuda_state& gst, protocol::call call, char* ring,
                                         std::uint32_t slot, const protocol::ring_record& record,
                                         held_ticket ticket) {
  if (!ticket.held) ticket = take_ring_ticket(gst, slot);
  ensure_ring_room(gst, call, slot, ticket);
  write_ring_record(ring, ticket.ticket, record);
}

// Sends `record` in the target's ring with `ticket` (taken here when none is held). `fence`:
// this call stored data to the target that the record must not overtake; a plain put to a peer
// GPU since the last fence (peer_fence_owed) needs the fence too.
__device__ inline void send_ring_record(dcuda_state& gst, protocol::call call, char* ring,
                                        std::uint32_t slot, protocol::ring_record record,
                                        bool fence, held_ticket ticket) {
  // Read before the fence: read after it, the acquire debt was one more dependent shared-memory
  // load before the record's store (notify 2.6 % slower than without the debt, same call; read
  // here, 1.6 %).
  const std::uint32_t acquire_owed = gst.peer_acquire_owed;
  if (fence || gst.peer_fence_owed != 0u) {
    fence_release_sys();
    gst.peer_fence_owed = 0;
    record.fenced = true;
  }
  if (protocol::acquire_owed_to(acquire_owed, slot)) record.fenced = true;
  store_ring_record(gst, call, ring, slot, record, ticket);
  if (record.fenced) gst.peer_acquire_owed = protocol::acquire_paid(acquire_owed, slot);
}

// A record without a payload to a rank on another GPU of the node (dcuda_notify, and the
// notification of a put whose data this call stored first: `data_before`). Out of line: one copy
// serves every call site, which keeps the registers of the kernels that call dcuda low. Scalars
// only: an argument passed by reference would go through local memory.
// `early_*`: the ticket taken before the entry barrier, or (held false, ring true) the ring's tail
// and taken position peeked there: a notification after this call's own data then counts without
// a record when the target has taken every record of this GPU (protocol/peer_ring.h), and the
// next record of this rank to a peer GPU is fenced, so that it does not overtake the count.
__device__ __noinline__ inline void send_ring_notification(dcuda_state& gst, protocol::call call,
                                                           char* ring, std::uint32_t slot, int tag,
                                                           bool data_before,
                                                           std::uint32_t early_ticket,
                                                           std::uint32_t early_seen,
                                                           bool early_held, bool early_ring) {
  if (data_before & early_ring & !early_held & (gst.ring_counts != 0u) &
      protocol::ring_fully_taken(early_ticket, early_seen)) {
    fence_release_sys();
    red_relaxed_sys_increment_u32(reinterpret_cast<std::uint32_t*>(
        ring + protocol::ring_counter_offset(static_cast<std::uint32_t>(tag))));
    gst.peer_fence_owed = 1;
    gst.peer_acquire_owed = protocol::owe_acquire(gst.peer_acquire_owed, slot);
    return;
  }
  const protocol::ring_record record{0u, 0u, static_cast<std::uint8_t>(tag), 0, 0, false};
  send_ring_record(gst, call, ring, slot, record, data_before,
                   held_ticket{early_ticket, early_seen, early_held});
}

// The record of a put_notify to another GPU whose payload travels in the ring (`size` bytes, at
// most protocol::ring_carry_limit; the first eight, `payload`, in the record): such a record needs
// no fence of the sender (the caller checked that none is owed, so it is not tested again).
// `acquire`: it is still marked fenced, so that the target acquires, when a plain put or a count
// to this target came before it (take_acquire_owed).
__device__ inline protocol::ring_record carried_record(int tag, std::uint64_t payload, int size,
                                                       int offset, int window_slot, bool acquire) {
  return {payload,
          static_cast<std::uint32_t>(offset),
          static_cast<std::uint8_t>(tag),
          static_cast<std::uint8_t>(window_slot),
          static_cast<std::uint8_t>(size),
          acquire};
}

// Whether this rank's next record to ring `slot` must make its target acquire (a plain put or a
// count to it came first, ordered by a fence since but not yet acquired there), and that it then
// owes no more there. A store every time, not a branch: thread 0's latency path.
__device__ inline bool take_acquire_owed(dcuda_state& gst, std::uint32_t slot) {
  const std::uint32_t owed = gst.peer_acquire_owed;
  gst.peer_acquire_owed = protocol::acquire_paid(owed, slot);
  return protocol::acquire_owed_to(owed, slot);
}

namespace ring_detail {
// Word `w` of a payload of `size` bytes at `buffer` (bytes 4w..4w+3, little-endian as they sit in
// memory; 0 past the end): one load where four aligned bytes are there, bytes otherwise.
__device__ inline std::uint32_t payload_word(const unsigned char* buffer, int size, int w) {
  const int first = 4 * w;
  if (first >= size) return 0u;
  if (first + 4 <= size && (reinterpret_cast<std::uintptr_t>(buffer + first) & 3u) == 0u) {
    return *reinterpret_cast<const std::uint32_t*>(buffer + first);
  }
  std::uint32_t word = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (first + i < size) word |= std::uint32_t{buffer[first + i]} << (8 * i);
  }
  return word;
}
}  // namespace ring_detail

// Thread 0's put_notify of `size` bytes (more than a record carries, at most
// protocol::ring_carry_limit) to another GPU, with no fence owed, after the entry barrier: the
// continuation slots (tickets ticket + 1 ...), a group's payload words loaded at once, then the
// record (ticket). The ticket and `seen` come from plan_put, which took all the tickets. Inline:
// with one continuation slot its code is small, and as a call (beside the target's out-of-line
// take_carried_record) it cost 1-4 B and notify 0.03-0.05 us.
__device__ __forceinline__ void send_carried_put(dcuda_state& gst, protocol::call call,
                                                 std::uint32_t ticket, std::uint32_t seen, int tag,
                                                 int offset, int size, int window_slot,
                                                 const void* buffer) {
  using ring_detail::continuation_group;
  const std::uint32_t ring_slot = gst.put_route_cache.ring_slot;
  // Decided first, so that its shared-memory load is not the last step before the record.
  const bool acquire = take_acquire_owed(gst, ring_slot);
  const std::uint32_t continuations =
      protocol::continuation_slots(static_cast<std::uint32_t>(size));
  const std::uint32_t last = ticket + continuations;
  if (!protocol::ring_has_room(last, seen)) {
    wait_for_ring_room(gst, call, ring_slot, last, gst.ring_taken_here + ring_slot);
  }
  const auto* bytes = static_cast<const unsigned char*>(buffer);
  char* const ring = gst.put_route_cache.ring;
  for (std::uint32_t first = 1; first <= continuations; first += continuation_group) {
    std::uint32_t words[2 * continuation_group];
#pragma unroll
    for (std::uint32_t i = 0; i < 2 * continuation_group; ++i) {
      words[i] = ring_detail::payload_word(bytes, size, static_cast<int>(2 * (first - 1) + 2 + i));
    }
#pragma unroll
    for (std::uint32_t i = 0; i < continuation_group; ++i) {
      const std::uint32_t at = ticket + first + i;
      if (first + i <= continuations) {
        const protocol::ring_words slot =
            protocol::encode_continuation(words[2 * i], words[2 * i + 1], at);
        store_relaxed_sys_v2_u64(ring + protocol::ring_slot(at) * protocol::ring_record_bytes,
                                 slot.first, slot.second);
      }
    }
  }
  const std::uint64_t payload = ring_detail::payload_word(bytes, size, 0) |
                                std::uint64_t{ring_detail::payload_word(bytes, size, 1)} << 32;
  write_ring_record(ring, ticket, carried_record(tag, payload, size, offset, window_slot, acquire));
}

}  // namespace dcuda::device
