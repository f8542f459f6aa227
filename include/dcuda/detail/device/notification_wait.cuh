// The target's side of notifications: thread 0 reads the rank's counter (ranks of this GPU, the
// delivery agent for the network) and takes the records of its peer rings
// (detail/device/ring_poll.cuh), then acquires the notified data once.
#pragma once

#include "dcuda/detail/device/communicators.cuh"
#include "dcuda/detail/device/ring_poll.cuh"
#include "dcuda/detail/device/spin_wait.cuh"
#include "dcuda/detail/protocol/notification_counters.h"

namespace dcuda::device {

// The counter of this rank's notifications of `tag` that ranks of this GPU and the delivery agent
// (for the network) add to. Peer GPUs count in the rings' counters instead (ring_counter).
__device__ inline std::uint32_t* notification_counter(const dcuda_state& gst, int tag) {
  return gst.notifications + protocol::counter_index(static_cast<std::uint32_t>(gst.device_rank),
                                                     static_cast<std::uint32_t>(tag));
}

// The acquire load of a counter whose relaxed reads showed enough. `system_scope`: whether peer
// GPUs or the delivery agent may have counted on it (gst.process_count > 1); they signal with
// system-scope releases, and the acquire must have the same scope.
__device__ inline void acquire_counter(std::uint32_t* counter, bool system_scope) {
  if (system_scope) {
    protocol::system_atomic<std::uint32_t>(*counter).load(cuda::memory_order_acquire);
  } else {
    protocol::device_atomic<std::uint32_t>(*counter).load(cuda::memory_order_acquire);
  }
}

// Notifications of `tag` that have arrived at this rank, counted on its counter and, with peer
// GPUs, on its rings' counters (records taken from the rings count by lowering consumed[tag]
// instead). Relaxed loads: a poll loop calls this
// many times; the caller issues one acquire load (acquire_notified_data) once it has seen enough.
// Measured on an H100 (docs/performance.md): relaxed polling then one acquire load gave 0.89 us
// one-way notify, acquire loads in the loop 1.01 us, relaxed polling then fence.acq_rel worse.
// The one-way acquire fence (fence.acquire, which a fenced ring record gets, ring_poll.cuh) in
// place of the acquire load measured no faster on the local path and within the noise, but
// slower by its median, on the network path (docs/performance.md, "Latency targets: what was
// tried"): counters keep their acquire load.
__device__ inline std::uint32_t arrived_notifications(const dcuda_state& gst, int tag) {
  std::uint32_t arrived = protocol::device_atomic<std::uint32_t>(*notification_counter(gst, tag))
                              .load(cuda::memory_order_relaxed);
  for (std::uint32_t peer = 0; peer < gst.ring_peers; ++peer) {
    arrived += load_relaxed_sys_u32(ring_detail::ring_counter(gst, peer, tag));
  }
  return arrived;
}

// Makes the data the notifying ranks published before their release visible to this thread
// (and, through the block barrier that follows, to the block): an acquire load of the counters
// whose relaxed reads showed enough.
__device__ inline void acquire_notified_data(const dcuda_state& gst, int tag) {
  acquire_counter(notification_counter(gst, tag), gst.process_count > 1);
}

// After a test or wait that saw `arrived` on the counters of a rank with rings (its own and its
// rings', summed): makes the data of the notifications they count visible, unless no more have
// been counted since the last acquire, which saw `acquired` (records from the rings need none:
// after a fenced one the rank acquired when it took it, a carried one brought its data; a wait
// answered by them alone pays nothing here). An acquire fence after the relaxed loads that saw
// the counts, not an acquire load: the counts sit in several words, written by this GPU's ranks
// (release reductions) and by peer GPUs (fence, then relaxed reductions).
__device__ inline void acquire_counted_since(dcuda_state& gst, int tag, std::uint32_t arrived,
                                             std::uint32_t acquired) {
  if (arrived == acquired) return;
  fence_acquire_sys();
  gst.counter_acquired[tag] = arrived;
}

// The same for any rank (`has_rings`: gst.ring_peers != 0; without rings every wait acquires).
__device__ inline void acquire_counted_data(dcuda_state& gst, int tag, std::uint32_t arrived,
                                            bool has_rings) {
  if (!has_rings) {
    acquire_notified_data(gst, tag);
    return;
  }
  acquire_counted_since(gst, tag, arrived, gst.counter_acquired[tag]);
}

// Host-initiated notifications of `tag` (dcuda/host_stream.h) this rank has not consumed; 0 without
// host windows. A relaxed load at system scope: stream kernels of peer GPUs, ranks' puts into host
// windows and the delivery agent (for those through the network) count here too, each after a
// release fence at system scope, which take_notifications' acquire fence pairs with.
__device__ inline std::uint32_t host_notifications_pending(const dcuda_state& gst, int tag) {
  if (gst.host_counters == nullptr) return 0;
  return load_relaxed_sys_u32(gst.host_counters + tag) - gst.host_taken[tag];
}

// Consumes `needed` notifications of `tag` once enough are available: first those sent by ranks
// (`arrived` on the counters, as arrived_notifications read them), then host-initiated ones; and
// makes the data of those it consumes visible. The host-initiated ones are counted in global
// memory (host_taken), so that those a run leaves are there for the next.
__device__ inline void take_notifications(dcuda_state& gst, int tag, std::uint32_t arrived,
                                          std::uint32_t needed) {
  const protocol::notification_take take = protocol::split_notifications(
      protocol::notifications_pending(arrived, gst.consumed[tag]), needed);
  acquire_counted_data(gst, tag, arrived, gst.ring_peers != 0u);
  gst.consumed[tag] += take.from_ranks;
  if (take.from_host != 0u) {
    fence_acquire_sys();
    gst.host_taken[tag] += take.from_host;
  }
}

// How many polls wait_on_one_ring makes itself before it hands the wait to spin_until (which
// publishes a wait that lasts and takes the watchdog's abort): a few hundred microseconds.
inline constexpr std::uint32_t tight_polls = 1024;

// The wait for notifications of a rank with one ring (two GPUs in the node), thread 0 only:
// every dependent step between a record's arrival and the wait's return is on the latency path
// of the peer ping-pong, so the poll keeps what it needs in registers (the counters' and the head
// slot's addresses, the ticket it expects, this tag's consumed count), examines two counter loads
// (its own, its ring's) and one record load per poll, and leaves the bookkeeping of long waits to
// spin_until. Returns true when the wait is over (its notifications consumed, their data acquired),
// false when it hands the wait over to spin_until: after tight_polls polls, and when the head holds
// a record it may not take yet (a payload for a window this rank does not know, or continuation
// slots that have not arrived).
__device__ inline bool wait_on_one_ring(dcuda_state& gst, int tag, std::uint32_t needed) {
  std::uint32_t* const counter = notification_counter(gst, tag);
  const std::uint32_t* const ring_counter = ring_detail::ring_counter(gst, 0, tag);
  std::uint32_t consumed = gst.consumed[tag];
  const std::uint32_t acquired = gst.counter_acquired[tag];
  std::uint32_t polls = 0;
  std::uint32_t arrived;
  while (true) {
    const std::uint32_t head = gst.ring_head[0];
    const char* slot = ring_detail::head_slot(gst, 0);
    protocol::ring_words words;
    do {
      if (++polls > tight_polls) return false;
      arrived = protocol::device_atomic<std::uint32_t>(*counter).load(cuda::memory_order_relaxed) +
                load_relaxed_sys_u32(ring_counter);
      words = ring_detail::load_record(slot);
      // Out of both loops to the one exit below (one copy of it, not two).
      if (protocol::notifications_available(arrived, consumed, needed)) goto done;
    } while (!protocol::ring_record_complete(words, head));
    // A record with a continuation slot is taken out of line, from here: handing it to
    // spin_until's polls cost a second look at the head (0.5 us more for 8 bytes).
    const ring_detail::taken_record took =
        ring_detail::carries_beyond_record(words)
            ? ring_detail::take_carried_record(gst, 0, words.first, words.second)
            : ring_detail::take_loaded(gst, 0, words);
    if (!took.taken) return false;
    if (took.tag == static_cast<std::uint32_t>(tag)) --consumed;
    if (protocol::notifications_available(arrived, consumed, needed)) break;
  }
done:
  acquire_counted_since(gst, tag, arrived, acquired);
  gst.consumed[tag] = consumed + needed;
  return true;
}

__device__ inline void check_notification_args(const dcuda_state& gst, protocol::call call, int tag,
                                               int count) {
  check_tag(gst, call, tag);
  if (count < 0) fail(gst.ctx, gst.world_rank, call, protocol::error_code::negative_count, count);
}

// dcuda_test_notifications, thread 0: whether `needed` notifications of `tag` have arrived; when
// they have, consumes them and acquires their data.
__device__ inline bool take_arrived_notifications(dcuda_state& gst, int tag, std::uint32_t needed) {
  const std::uint32_t arrived = arrived_notifications(gst, tag);
  const std::uint32_t from_host = host_notifications_pending(gst, tag);
  if (gst.ring_peers != 0u) poll_rings(gst);
  const bool ready = protocol::notifications_available_from_both(
      protocol::notifications_pending(arrived, gst.consumed[tag]), from_host, needed);
  if (ready) take_notifications(gst, tag, arrived, needed);
  return ready;
}

// The wait for notifications of a rank without rings (no other GPU in its node), thread 0 only:
// every notification it can get counts on its counter, so a poll is one relaxed load of an address
// kept in a register, compared with the consumed count, also in a register; nothing else is read
// or checked between the polls (the local ping-pong's latency path). Returns true when the wait is
// over (its notifications consumed, their data acquired), false after tight_polls polls, when it
// hands the wait over to spin_until, which publishes a wait that lasts and takes the watchdog's
// abort.
__device__ inline bool wait_on_counter(dcuda_state& gst, int tag, std::uint32_t needed) {
  std::uint32_t* const counter = notification_counter(gst, tag);
  const std::uint32_t consumed = gst.consumed[tag];
  // Read before the poll: after it, the read would delay the acquire.
  const bool system_scope = gst.process_count > 1;
#pragma unroll 1
  for (std::uint32_t polls = 0; polls < tight_polls; ++polls) {
    const std::uint32_t arrived =
        protocol::device_atomic<std::uint32_t>(*counter).load(cuda::memory_order_relaxed);
    if (protocol::notifications_available(arrived, consumed, needed)) {
      acquire_counter(counter, system_scope);
      gst.consumed[tag] = consumed + needed;
      return true;
    }
  }
  return false;
}

// The wait for notifications that the tight polls did not end, and every wait of a rank with
// several rings or with host windows: each poll reads the counters (host-initiated notifications'
// too) and takes the records at the heads of the rings; spin_until publishes a wait that lasts. Out
// of line: its ring polls and bookkeeping would share the registers of the tight polls' paths (the
// local and peer latency paths), which then kept the caller's loop state in local memory.
__device__ __noinline__ inline void wait_for_notifications_polling_rings(dcuda_state& gst,
                                                                         protocol::call call,
                                                                         int tag,
                                                                         std::uint32_t needed) {
  std::uint32_t arrived = 0;
  spin_until(gst, wait_description{call, protocol::wait_kind::notifications, tag, needed},
             [&](std::uint32_t& available) {
               // Issued before the rings' loads: one memory latency a poll.
               arrived = arrived_notifications(gst, tag);
               const std::uint32_t from_host = host_notifications_pending(gst, tag);
               if (gst.ring_peers != 0u) poll_rings(gst);
               const std::uint32_t from_ranks =
                   protocol::notifications_pending(arrived, gst.consumed[tag]);
               available = from_ranks + from_host;
               return protocol::notifications_available_from_both(from_ranks, from_host, needed);
             });
  take_notifications(gst, tag, arrived, needed);
}

// dcuda_wait_notifications (or its thread-scoped form: `call`, which the watchdog names), thread
// 0: waits until `needed` notifications of `tag` have arrived, consumes them and acquires their
// data. Without rings or with one, and without host windows, the tight poll first.
__device__ inline void wait_for_notifications(dcuda_state& gst, protocol::call call, int tag,
                                              std::uint32_t needed) {
  const std::uint32_t peers = gst.ring_peers;
  const bool counts_host = gst.host_counters != nullptr;
  const bool done = counts_host   ? false
                    : peers == 0u ? wait_on_counter(gst, tag, needed)
                    : peers == 1u ? wait_on_one_ring(gst, tag, needed)
                                  : false;
  if (!done) wait_for_notifications_polling_rings(gst, call, tag, needed);
}

}  // namespace dcuda::device
