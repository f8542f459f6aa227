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

// Both words of the record in a slot, in one 16-byte load. Relaxed for polling; acquire (which
// synchronises with the fence a sender issues before a record that follows data) for a fenced
// record, read again once it is complete.
template <bool acquire = false>
__device__ inline protocol::ring_words load_record(const char* slot) {
  protocol::ring_words words;
  if constexpr (acquire) {
    load_acquire_sys_v2_u64(slot, words.first, words.second);
  } else {
    load_relaxed_sys_v2_u64(slot, words.first, words.second);
  }
  return words;
}

// Four aligned bytes in one store; otherwise byte stores, unrolled (no loop on the fast path).
__device__ inline void scatter_payload(char* destination, std::uint32_t payload, int size) {
  if (size == 4 && (reinterpret_cast<std::uintptr_t>(destination) & 3u) == 0u) {
    *reinterpret_cast<std::uint32_t*>(destination) = payload;
    return;
  }
#pragma unroll
  for (int i = 0; i < protocol::ring_payload_limit; ++i) {
    if (i < size) destination[i] = static_cast<char>(payload >> (8 * i));
  }
}

__device__ inline const char* head_slot(const dcuda_state& gst, std::uint32_t peer) {
  return gst.rings + std::uint64_t{peer} * protocol::ring_bytes +
         protocol::ring_slot(gst.ring_head[peer]) * protocol::ring_record_bytes;
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
  // The common case, four aligned bytes inside a known window, is one test and one store (the
  // offset is below 2^31, so offset + 4 cannot wrap). Any other payload is checked in full first:
  // the record comes from another process. The failure is inlined: a call here would make the
  // whole poll keep its values in the registers the ABI saves.
  if ((record.size == 4u) & window_known &
      ((reinterpret_cast<std::uintptr_t>(destination) & 3u) == 0u) &
      (record.offset + 4u <= window.size)) {
    *reinterpret_cast<std::uint32_t*>(destination) = record.payload;
  } else if (payload) {
    // A record no sender writes is refused at once, even for a window this rank does not hold.
    if (!window_known & (record.size <= protocol::ring_payload_limit)) return {false, record.tag};
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

// Takes the complete record `words`, loaded (relaxed) from `slot`, the head of ring `peer`. A
// fenced record follows data the sender stored before it (a regular put): it is read again with
// acquire before it counts. Any other record follows no data of the sender's that it would need
// (protocol/peer_ring.h).
__device__ inline taken_record take_loaded(dcuda_state& gst, std::uint32_t peer, const char* slot,
                                           protocol::ring_words words) {
  if (protocol::decode_ring_record(words).fenced) words = load_record<true>(slot);
  return take_head(gst, peer, words.first, words.second);
}

// Looks at the head of ring `peer` (relaxed: an acquire load would invalidate the L1 cache on
// every poll) and takes the record there.
__device__ inline bool poll_ring(dcuda_state& gst, std::uint32_t peer) {
  const char* slot = head_slot(gst, peer);
  const protocol::ring_words words = load_record(slot);
  if (!protocol::ring_record_complete(words, gst.ring_head[peer])) return false;
  return take_loaded(gst, peer, slot, words).taken;
}

// Several rings (more than two GPUs): the heads are read together (relaxed), and a ring whose head
// shows a complete record is taken with the words found. Out of line: it would cost every kernel
// registers on the fast path.
__device__ __noinline__ inline bool poll_many_rings(dcuda_state& gst) {
  bool took = false;
  for (std::uint32_t first = 0; first < gst.ring_peers; first += 4) {
    const char* slots[4];
    protocol::ring_words heads[4];
#pragma unroll
    for (std::uint32_t i = 0; i < 4; ++i) {
      if (first + i < gst.ring_peers) {
        slots[i] = head_slot(gst, first + i);
        heads[i] = load_record(slots[i]);
      }
    }
#pragma unroll
    for (std::uint32_t i = 0; i < 4; ++i) {
      const std::uint32_t peer = first + i;
      if (peer < gst.ring_peers && protocol::ring_record_complete(heads[i], gst.ring_head[peer])) {
        took = take_loaded(gst, peer, slots[i], heads[i]).taken || took;
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
