// The target's side of the peer rings (protocol/peer_ring.h): polling the heads of a rank's rings
// and taking the records found there. Thread 0 of a rank only. Every dcuda wait polls them (the
// wait for notifications on every spin, the others now and then: detail/device/spin_wait.cuh), so a
// rank blocked anywhere in dcuda still takes what is sent to it and its senders never wait for
// ring room forever.
#pragma once

#include "dcuda/detail/device/code_generation.cuh"
#include "dcuda/detail/device/fail.cuh"
#include "dcuda/detail/device/memory_order.cuh"
#include "dcuda/device/state.cuh"
#include "dcuda/detail/protocol/peer_ring.h"

namespace dcuda::device {

namespace ring_detail {

// Both words of the record in a slot, in one 16-byte load, relaxed: a record that follows data
// (fenced) is acquired with a fence once it is seen complete (take_loaded).
__device__ inline protocol::ring_words load_record(const char* slot) {
  protocol::ring_words words;
  load_relaxed_sys_v2_u64(slot, words.first, words.second);
  return words;
}

// A payload that is no aligned scalar (take_head stores those), or the record's eight bytes of a
// longer one: eight aligned bytes in one store, otherwise byte stores, unrolled.
__device__ inline void scatter_payload(char* destination, std::uint64_t payload, int size) {
  if (size == 8 && (reinterpret_cast<std::uintptr_t>(destination) & 7u) == 0u) {
    *reinterpret_cast<std::uint64_t*>(destination) = payload;
    return;
  }
#pragma unroll
  for (int i = 0; i < protocol::record_payload_bytes; ++i) {
    if (i < size) destination[i] = static_cast<char>(payload >> (8 * i));
  }
}

// A payload of `size` bytes, 1, 2 or 8, at `destination`, aligned to its size: one store.
// Independent tests, not a chain: the compiler predicates the stores instead of branching.
__device__ inline void store_scalar(char* destination, std::uint64_t payload, std::uint32_t size) {
  if (size == 8u) *reinterpret_cast<std::uint64_t*>(destination) = payload;
  if (size == 2u) {
    *reinterpret_cast<std::uint16_t*>(destination) = static_cast<std::uint16_t>(payload);
  }
  if (size == 1u) {
    *reinterpret_cast<std::uint8_t*>(destination) = static_cast<std::uint8_t>(payload);
  }
}

__device__ inline const char* head_slot(const dcuda_state& gst, std::uint32_t peer) {
  return gst.rings + std::uint64_t{peer} * protocol::ring_bytes +
         protocol::ring_slot(gst.ring_head[peer]) * protocol::ring_record_bytes;
}

// The counter of `tag`'s notifications that ring `peer`'s senders counted without a record
// (protocol::ring_counter_offset).
__device__ inline const std::uint32_t* ring_counter(const dcuda_state& gst, std::uint32_t peer,
                                                    int tag) {
  return reinterpret_cast<const std::uint32_t*>(
      gst.rings + std::uint64_t{peer} * protocol::ring_bytes +
      protocol::ring_counter_offset(static_cast<std::uint32_t>(tag)));
}

// What taking a record did: whether it was taken, and its tag (meaningful when taken).
struct taken_record {
  bool taken;
  std::uint32_t tag;
};

// Takes the complete record `words` found at the head of ring `peer`: lands its payload, counts
// its notification (by owing one less) and tells the sending GPU how far the ring is taken.
// Inline: taking the record is on the latency path, and an out-of-line call saves and restores
// registers through local memory. The state it needs is read first, every load at once, and
// tested with one branch: each dependent step here delays the rank's answer to the sender.
__device__ inline taken_record take_head(dcuda_state& gst, std::uint32_t peer, std::uint64_t first,
                                         std::uint64_t second) {
  const protocol::ring_record record = protocol::decode_ring_record({first, second});
  const std::uint32_t head = owner_read(gst.ring_head[peer]);
  // Records land only in windows of DCUDA_COMM_WORLD that this rank holds.
  const std::uint32_t ring_windows = owner_read(gst.ring_windows);
  const dcuda_ring_window window{owner_read(gst.ring_window[record.window_slot].base),
                                 owner_read(gst.ring_window[record.window_slot].size), 0};
  const std::uint32_t consumed = owner_read(gst.consumed[record.tag]);
  std::uint32_t* const taken_position = owner_read(gst.ring_taken[peer]);
  // A sender may put into a window as soon as its own dcuda_win_create returns, while this rank
  // is still inside it (polling its rings in the collective's barrier): a payload for a window
  // this rank does not know yet waits at the head of the ring until it does.
  const bool payload = record.size != 0u;
  const bool window_known = (ring_windows >> record.window_slot & 1u) != 0u;
  char* const destination = reinterpret_cast<char*>(window.base) + record.offset;
  // The common cases, four aligned bytes, then any other scalar (1, 2 or 8 bytes aligned to its
  // size), inside a known window, are one test and one store each (the offset is below 2^31, so
  // offset + 8 cannot wrap); the four bytes first, as one test: behind the general one they lost
  // 0.02 us. Any other payload is checked in full first: the record comes from another process.
  // The failure is inlined: a call here would make the whole poll keep its values in the
  // registers the ABI saves.
  const std::uint32_t size = record.size;
  const auto address = reinterpret_cast<std::uintptr_t>(destination);
  const bool scalar =
      ((size == 1u) | (size == 2u) | (size == 8u)) & ((address & (size - 1u)) == 0u);
  if ((size == 4u) & window_known & ((address & 3u) == 0u) & (record.offset + 4u <= window.size)) {
    *reinterpret_cast<std::uint32_t*>(destination) = static_cast<std::uint32_t>(record.payload);
  } else if (scalar & window_known & (record.offset + size <= window.size)) {
    store_scalar(destination, record.payload, size);
  } else if (payload) {
    // A record no sender writes is refused at once, even for a window this rank does not hold.
    if (!window_known & (record.size <= protocol::record_payload_bytes)) {
      return {false, record.tag};
    }
    if (protocol::ring_record_fault_of(record, window.size) != protocol::ring_record_fault::none) {
      report_and_trap(
          gst.ctx, gst.world_rank, protocol::call::ring_poll, protocol::error_code::bad_ring_record,
          peer, record.size, record.offset,
          static_cast<std::int64_t>(std::uint64_t{record.window_slot} << 32 | window.size));
    }
    scatter_payload(destination, record.payload, record.size);
  }
  gst.consumed[record.tag] = consumed - 1u;
  gst.ring_head[peer] = head + 1u;
  store_relaxed_sys_u32(taken_position, head + 1u);
  return {true, record.tag};
}

// How many times take_carried_record looks again at continuation slots that have not all arrived
// before it leaves the record at the head for a later poll (they were stored before the record,
// so they are normally there already).
inline constexpr int continuation_looks = 64;

// Continuation slots loaded or stored at once, by the target and by the sender (peer_ring.cuh):
// all of them at ring_carry_limit 16 (one slot). The loops over groups are kept: a version
// written for exactly that one slot, with the payload landed through scatter_payload and
// gathered through payload_word, measured 8 B 4.5 % slower.
inline constexpr std::uint32_t continuation_group = protocol::max_continuation_slots;

// Lands the words of one group of continuation slots (the first of them is the payload's slot
// `first`, counted from 1) at `destination`, the payload's start: bytes 8 + 8 (first - 1) on.
// `aligned`: the destination is 4-byte aligned.
__device__ inline void land_continuations(char* destination, bool aligned, std::uint32_t size,
                                          std::uint32_t first,
                                          const protocol::ring_words (&group)[continuation_group]) {
#pragma unroll
  for (std::uint32_t i = 0; i < 2 * continuation_group; ++i) {
    const std::uint32_t at =
        protocol::record_payload_bytes + protocol::continuation_payload_bytes * (first - 1) + 4 * i;
    const auto word =
        static_cast<std::uint32_t>(i % 2 == 0 ? group[i / 2].first : group[i / 2].second);
    if (at >= size) continue;
    if (aligned && at + 4 <= size) {
      *reinterpret_cast<std::uint32_t*>(destination + at) = word;
    } else {
#pragma unroll
      for (std::uint32_t b = 0; b < 4; ++b) {
        if (at + b < size) destination[at + b] = static_cast<char>(word >> (8 * b));
      }
    }
  }
}

// Takes the complete record `words` at the head of ring `peer` when it carries more payload than
// a record holds: checks the record (it comes from another process), loads exactly the
// continuation slots it has (a load of a ring slot costs more than its latency: loading slots
// ahead of need, in parallel, made an 8-byte put_notify 1.7 us slower), and, as each group of
// them is complete, lands its bytes in the window; once all are, takes the record as take_head
// does. Returns not taken when the slots are not complete yet, or the record is for a window
// this rank does not hold yet; the bytes landed by then are this record's, landed again when a
// later poll takes it. Out of line: its registers stay off the poll loops.
__device__ __noinline__ inline taken_record take_carried_record(dcuda_state& gst,
                                                                std::uint32_t peer,
                                                                std::uint64_t first_word,
                                                                std::uint64_t second_word) {
  const std::uint32_t head = gst.ring_head[peer];
  const char* const ring = gst.rings + std::uint64_t{peer} * protocol::ring_bytes;
  const auto slot_of = [&](std::uint32_t ticket) {
    return ring + protocol::ring_slot(ticket) * protocol::ring_record_bytes;
  };
  const protocol::ring_record record = protocol::decode_ring_record({first_word, second_word});
  const std::uint32_t continuations = protocol::continuation_slots(record.size);
  protocol::ring_words group[continuation_group];
#pragma unroll
  for (std::uint32_t i = 0; i < continuation_group; ++i) {
    if (1 + i <= continuations) group[i] = load_record(slot_of(head + 1 + i));
  }
  const dcuda_ring_window window{gst.ring_window[record.window_slot].base,
                                 gst.ring_window[record.window_slot].size, 0};
  // As in take_head: a payload no sender writes is refused at once, even for a window this rank
  // does not hold; one for a window it does not know yet waits at the head until it does.
  const bool window_known = (gst.ring_windows >> record.window_slot & 1u) != 0u;
  if ((record.size > protocol::ring_carry_limit) |
      (window_known &&
       protocol::ring_record_fault_of(record, window.size) != protocol::ring_record_fault::none)) {
    report_and_trap(
        gst.ctx, gst.world_rank, protocol::call::ring_poll, protocol::error_code::bad_ring_record,
        peer, record.size, record.offset,
        static_cast<std::int64_t>(std::uint64_t{record.window_slot} << 32 | window.size));
  }
  if (!window_known) return {false, record.tag};
  char* const destination = reinterpret_cast<char*>(window.base) + record.offset;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(destination) & 3u) == 0u;
  scatter_payload(destination, record.payload, protocol::record_payload_bytes);
  for (std::uint32_t first = 1; first <= continuations; first += continuation_group) {
    if (first != 1) {
#pragma unroll
      for (std::uint32_t i = 0; i < continuation_group; ++i) {
        if (first + i <= continuations) group[i] = load_record(slot_of(head + first + i));
      }
    }
    for (int look = 0;; ++look) {
      bool complete = true;
#pragma unroll
      for (std::uint32_t i = 0; i < continuation_group; ++i) {
        const std::uint32_t ticket = head + first + i;
        if (first + i <= continuations && !protocol::continuation_complete(group[i], ticket)) {
          complete = false;
          group[i] = load_record(slot_of(ticket));
        }
      }
      if (complete) break;
      if (look == continuation_looks) return {false, record.tag};
    }
    land_continuations(destination, aligned, record.size, first, group);
  }
  // The record is taken: as take_head, with the continuation slots' tickets too.
  const std::uint32_t next = head + 1u + continuations;
  gst.consumed[record.tag] -= 1u;
  gst.ring_head[peer] = next;
  store_relaxed_sys_u32(gst.ring_taken[peer], next);
  // A carried record marked fenced follows a plain put or a count of its sender to this rank,
  // which the wait's caller may read next. Last: between the loads above, the fence made the
  // compiler load the rank's state again after it (16 B one way 0.10 us slower than without the
  // acquire debt, same call; here 0.04 us).
  if (record.fenced) fence_acquire_sys();
  return {true, record.tag};
}

// Whether the complete record `words` has more payload than a record holds (continuation slots
// follow it, or it is no record dcuda writes): take_carried_record takes it, not take_loaded.
__device__ inline bool carries_beyond_record(const protocol::ring_words& words) {
  return protocol::decode_ring_record(words).size > protocol::record_payload_bytes;
}

// Takes the complete record `words`, loaded (relaxed) from the head of ring `peer`, which
// carries at most a record's payload (carries_beyond_record is false). A fenced record follows
// data the sender stored before it (a regular put), released by the sender's fence: the relaxed
// load that saw the record and an acquire fence make that data visible before the record counts.
// Any other record follows no data of the sender's that it would need (protocol/peer_ring.h).
__device__ inline taken_record take_loaded(dcuda_state& gst, std::uint32_t peer,
                                           protocol::ring_words words) {
  if (protocol::decode_ring_record(words).fenced) fence_acquire_sys();
  return take_head(gst, peer, words.first, words.second);
}

// Takes the complete record `words` at the head of ring `peer`, whatever it carries.
__device__ inline bool take_complete(dcuda_state& gst, std::uint32_t peer,
                                     protocol::ring_words words) {
  if (carries_beyond_record(words)) {
    return take_carried_record(gst, peer, words.first, words.second).taken;
  }
  return take_loaded(gst, peer, words).taken;
}

// Looks at the head of ring `peer` (relaxed: an acquire load would invalidate the L1 cache on
// every poll) and takes the record there.
__device__ inline bool poll_ring(dcuda_state& gst, std::uint32_t peer) {
  const protocol::ring_words words = load_record(head_slot(gst, peer));
  if (!protocol::ring_record_complete(words, gst.ring_head[peer])) return false;
  return take_complete(gst, peer, words);
}

// Several rings (more than two GPUs): the heads are read together (relaxed), and a ring whose head
// shows a complete record is taken with the words found. Out of line: it would cost every kernel
// registers on the fast path.
__device__ __noinline__ inline bool poll_many_rings(dcuda_state& gst) {
  bool took = false;
  for (std::uint32_t first = 0; first < gst.ring_peers; first += 4) {
    protocol::ring_words heads[4];
#pragma unroll
    for (std::uint32_t i = 0; i < 4; ++i) {
      if (first + i < gst.ring_peers) heads[i] = load_record(head_slot(gst, first + i));
    }
#pragma unroll
    for (std::uint32_t i = 0; i < 4; ++i) {
      const std::uint32_t peer = first + i;
      if (peer < gst.ring_peers && protocol::ring_record_complete(heads[i], gst.ring_head[peer])) {
        took = take_complete(gst, peer, heads[i]) || took;
      }
    }
  }
  return took;
}
}  // namespace ring_detail

// One look at the head of each of this rank's rings; takes what is there. Thread 0 only; a rank
// with no other GPU on its node has no rings. One ring (two GPUs): one relaxed load.
__device__ inline bool poll_rings(dcuda_state& gst) {
  using namespace ring_detail;
  if (gst.ring_peers == 1u) return poll_ring(gst, 0);
  return poll_many_rings(gst);
}

// poll_rings for the waits that poll the rings only now and then (device/spin_wait.cuh): out of
// line, so that it costs those waits no registers.
__device__ __noinline__ inline void poll_rings_out_of_line(dcuda_state& gst) {
  poll_rings(gst);
}

// Takes every record in this rank's rings (after a barrier of DCUDA_COMM_WORLD, and while a
// sender waits for room). Thread 0 only.
__device__ __noinline__ inline void drain_rings(dcuda_state& gst) {
  while (poll_rings(gst)) {
  }
}

// After a barrier of DCUDA_COMM_WORLD: records sent before it are visible now; their payloads
// land before any thread of the rank goes on (a program may read put data after a barrier
// without waiting for the notification).
__device__ inline void settle_rings(dcuda_state& gst) {
  if (gst.ring_peers == 0u) return;  // the same on every thread of the rank
  if (threadIdx.x == 0) drain_rings(gst);
  __syncthreads();
}

}  // namespace dcuda::device
