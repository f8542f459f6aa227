// The path of dcuda_put and dcuda_put_notify: thread 0 checks the arguments and plans the route
// before the entry barrier (plan_put); after it, the rank stores the data itself (a target on
// this GPU or on a peer GPU of the node) or hands the operation to the host proxy (the network),
// and thread 0 notifies.
#pragma once

#include "dcuda/detail/device/block_copy.cuh"
#include "dcuda/detail/device/code_generation.cuh"
#include "dcuda/detail/device/host_window_put.cuh"
#include "dcuda/detail/device/notify_path.cuh"
#include "dcuda/detail/device/peer_ring.cuh"
#include "dcuda/detail/device/ptx_instructions.cuh"
#include "dcuda/detail/device/remote_send.cuh"
#include "dcuda/detail/device/target_route.cuh"
#include "dcuda/detail/device/tickets.cuh"
#include "dcuda/detail/device/window_slots.cuh"

namespace dcuda::device {

// Stops the run with the precise complaint about a put whose arguments the fast check rejected.
// Out of line: the fast path only computes one combined condition.
// (Scalars, not the route: a reference would put the route in local memory on the fast path.)
__device__ __noinline__ inline void report_bad_put(const dcuda_state& gst, protocol::call call,
                                                   dcuda_win win, int rank, int offset, int size,
                                                   const void* buffer,
                                                   std::uint32_t remote_generation,
                                                   std::uint64_t remote_size,
                                                   std::uint64_t own_base, std::uint64_t own_size) {
  if (remote_generation != protocol::window_generation(win)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::window_not_on_target, win, rank);
  }
  if (size < 0) fail(gst.ctx, gst.world_rank, call, protocol::error_code::negative_size, size);
  if (!protocol::range_inside_window(offset, size, remote_size)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::target_range_outside, offset, size,
         static_cast<std::int64_t>(remote_size), rank);
  }
  const auto source = reinterpret_cast<std::uint64_t>(buffer);
  fail(gst.ctx, gst.world_rank, call, protocol::error_code::source_outside_window,
       static_cast<std::int64_t>(source), static_cast<std::int64_t>(own_base),
       static_cast<std::int64_t>(own_size), size);
}

// Stops the run with the precise complaint about a put's tag, window or rank (the checks in
// their order); returns when all are right. Out of line, like report_bad_put.
__device__ __noinline__ inline void report_bad_target(const dcuda_state& gst, protocol::call call,
                                                      dcuda_win win, int rank, int tag) {
  check_tag(gst, call, tag);
  const int slot = checked_window_slot(gst, call, win);
  check_rank(gst, call, window_comm(gst, slot), rank);
}

// Whether a put's arguments are wrong, given whether its tag, window and rank are
// (`target_known`) and the window entries of the target and of this rank. Window sizes are ints
// (dcuda_win_create), so 32-bit arithmetic covers every valid range; (offset | size) < 0 catches
// either being negative. One condition, so that the fast path tests it with one branch.
__device__ inline bool put_arguments_bad(bool target_known, dcuda_win win, int offset, int size,
                                         const void* buffer, const protocol::window_entry& remote,
                                         const protocol::window_entry& own) {
  const auto remote_size = static_cast<std::uint32_t>(remote.size);
  const std::uint64_t source_offset = reinterpret_cast<std::uint64_t>(buffer) - own.base;
  return !target_known || (offset | size) < 0 ||
         remote.generation != protocol::window_generation(win) ||
         static_cast<std::uint32_t>(offset) > remote_size ||
         static_cast<std::uint32_t>(size) > remote_size - static_cast<std::uint32_t>(offset) ||
         source_offset > own.size || static_cast<std::uint64_t>(size) > own.size - source_offset;
}

// Puts up to this size are made by thread 0 alone (thread_put), without a block barrier between
// the copy and the notification.
inline constexpr int single_thread_put_limit = 16;

// Whether a put's tag, window and rank are right (a window this rank holds, a rank of its
// communicator), from shared state alone. Bitwise, not short-circuit: every load is issued at
// once and one branch tests them all.
__device__ inline bool put_target_known(const dcuda_state& gst, dcuda_win win, int slot, int rank,
                                        int tag) {
  // Every field read at once, volatile, so that the compiler neither sinks them behind the route
  // cache's test in plan_put nor picks one size by on_world (either was a second round of
  // shared-memory loads on the put's path); the rank is compared with both sizes.
  const bool on_world = (owner_read(gst.world_windows) >> slot & 1u) != 0u;
  const bool in_use = (owner_read(gst.windows_in_use) >> slot & 1u) != 0u;
  const bool generation_matches =
      owner_read(gst.generation[slot]) == protocol::window_generation(win);
  const bool in_world =
      static_cast<unsigned>(rank) < static_cast<unsigned>(owner_read(gst.world_size));
  const bool in_device =
      static_cast<unsigned>(rank) < static_cast<unsigned>(owner_read(gst.device_ranks));
  return protocol::window_handle_well_formed(win) & in_use & generation_matches &
         (on_world ? in_world : in_device) &
         (static_cast<unsigned>(tag) < static_cast<unsigned>(protocol::tag_count));
}

// Thread 0: leaves a put's route and both window entries in the put route cache, keyed on the
// window and the rank argument (plan_put reads it back; every thread reads it after the barrier).
__device__ inline void cache_put_route(dcuda_state& gst, dcuda_win win, int rank, int target,
                                       const target_route& to, const protocol::window_entry& remote,
                                       const protocol::window_entry& own) {
  gst.cached_window = win;
  gst.cached_rank = rank;
  cache_target_route(gst.put_route_cache, target, to);
  gst.cached_target_base = remote.base;
  gst.cached_target_size = remote.size;
  gst.cached_own_base = own.base;
  gst.cached_own_size = own.size;
}

// Thread 0, when a put misses the route cache or the fast check rejected its arguments: finds
// the target's route and the two window entries in the tables, leaves them in the cache, and
// stops the run with the precise complaint when the arguments are wrong. Out of line: its loads,
// its table arithmetic and the reports' arguments would otherwise share the registers of the
// put's fast path, which then kept the cached route in local memory on every put.
__device__ __noinline__ inline void refresh_put_route(dcuda_state& gst, protocol::call call,
                                                      dcuda_win win, int rank, int offset, int size,
                                                      const void* buffer, int tag) {
  if (protocol::is_host_window_handle(win)) {
    cache_host_window_put(gst, call, win, rank, offset, size, tag);
    return;
  }
  const int slot = protocol::window_slot(win) & (protocol::max_windows - 1);
  // The window table and the route table are indexed by the target: checked first.
  if (!put_target_known(gst, win, slot, rank, tag)) report_bad_target(gst, call, win, rank, tag);
  const bool on_world = (gst.world_windows >> slot & 1u) != 0u;
  const int target = window_target_rank(on_world, rank, gst.rank_start);
  const protocol::window_entry own = window_of(gst, slot, gst.world_rank);
  const protocol::window_entry remote = window_of(gst, slot, target);
  const target_route to = route_to(gst, target);
  // Cached before the checks below: a put that fails them stops the run.
  cache_put_route(gst, win, rank, target, to, remote, own);
  if (put_arguments_bad(true, win, offset, size, buffer, remote, own)) {
    report_bad_put(gst, call, win, rank, offset, size, buffer, remote.generation, remote.size,
                   own.base, own.size);
  }
}

// Thread 0, before a put's entry barrier: checks the arguments, leaves the put's route in the
// route cache (gst.cached_*), where every thread reads it after the barrier, and takes the ticket
// of a latency path (returned; none otherwise).
//
// Why thread 0 alone, and before the barrier: the checks, the route and their window entries are
// a dozen values. Computed by every thread, they would stay live across the block copy of a
// large put in every thread, and a 1024-thread rank (64 registers) would spill its caller's
// loop state to local memory around each put, which costs more than the payload at 64 KiB
// (docs/notes/performance-history.md, "The put path's registers"). Spills in thread 0's branch cost
// one lane. Before the barrier, the checks and the ticket atomic's round trip overlap the wait for
// the other threads. Nothing here reads the caller's buffer: the barrier orders the rank's stores
// to it before the copy.
//
// The cache is keyed on the window and the rank argument; only thread 0 reads it before the
// barrier and writes it, and every put ends with a block barrier after the other threads have
// read it (put_along), so a write here never races their reads of the previous put's route.
// The fast path is a hit with good arguments: the cache's fields are read at once (before the
// hit is known; on a miss they are not used) and tested with one branch; everything else is out
// of line (refresh_put_route), after which the route is read from the cache it refreshed.
__device__ inline held_ticket plan_put(dcuda_state& gst, protocol::call call, dcuda_win win,
                                       int rank, int offset, int size, const void* buffer,
                                       bool notify, int tag) {
  const int slot = protocol::window_slot(win) & (protocol::max_windows - 1);
  const bool target_known = put_target_known(gst, win, slot, rank, tag);
  // Bitwise, not short-circuit: the rank's load does not wait for the window's compare.
  const bool hit = (win == owner_read(gst.cached_window)) & (rank == owner_read(gst.cached_rank));
  const protocol::window_entry remote{owner_read(gst.cached_target_base),
                                      owner_read(gst.cached_target_size),
                                      protocol::window_generation(win), 0, 0};
  const protocol::window_entry own{owner_read(gst.cached_own_base), owner_read(gst.cached_own_size),
                                   0, 0, 0};
  // Read with the other fields: read after the test, it was a second round of shared-memory
  // loads on a hit (the hit does not change it).
  auto path = static_cast<protocol::route>(owner_read(gst.put_route_cache.path));
  if (!hit || put_arguments_bad(target_known, win, offset, size, buffer, remote, own)) {
    refresh_put_route(gst, call, win, rank, offset, size, buffer, tag);
    path = static_cast<protocol::route>(owner_read(gst.put_route_cache.path));
  }
  held_ticket ticket{};
  if (notify && path == protocol::route::peer && size <= protocol::ring_carry_limit) {
    // A put_notify to another GPU that the ring may carry ends with a record in the target's
    // ring, whether its payload travels in the record (no fence) or is stored first (fenced
    // record, when a fence is owed): its ticket is taken here, so that the atomic's round trip
    // overlaps the entry barrier instead of following it.
    ticket = take_ring_ticket(gst.ring_taken_here, gst.ring_tails,
                              owner_read(gst.put_route_cache.ring_slot),
                              put_notify_tickets(size, gst.peer_fence_owed != 0u));
  } else if (notify && path == protocol::route::peer) {
    // A larger one stores its data and fences first, then counts its notification without a
    // record when the target has taken every record of this GPU (send_ring_notification): the
    // two loads that tell are issued here and have arrived by the time the data is fenced.
    ticket = peek_ring_tail(gst.ring_taken_here, gst.ring_tails,
                            owner_read(gst.put_route_cache.ring_slot));
  } else if (path == protocol::route::network && size <= protocol::compact_payload_bytes) {
    ticket = take_channel_ticket(gst.commands);
  } else {
    // Thread 0 copies a small payload itself after the barrier (thread_put), and its load would
    // find L1 emptied by the rank's last acquire: the line is on its way during the barrier.
    if (size <= single_thread_put_limit) prefetch_l1(buffer);
    return ticket;
  }
  // The payload's line into L1 (a prefetch returns no data, so nothing is read ahead of the
  // barrier; the load after it then finds the line).
  prefetch_l1(buffer);
  return ticket;
}

// What plan_put cached for the put now under way (after its entry barrier).
__device__ inline void* cached_destination(const dcuda_state& gst, int offset) {
  return reinterpret_cast<void*>(gst.cached_target_base + static_cast<std::uint32_t>(offset));
}
__device__ inline protocol::operation_kind put_kind(bool notify) {
  return notify ? protocol::operation_kind::put_notify : protocol::operation_kind::put;
}

// Thread 0, once the rank has stored a put's data at a target of the node (after the block
// barrier, if every thread stored): the notification, which must not overtake the data (with
// plan_put's ring ticket, when it took one), or, for a plain put to another GPU, the fence the
// next record to a peer owes; for a put into a host window, its fence and count. (A put of at
// most single_thread_put_limit bytes to a rank of this GPU, the local latency path, ends in
// thread_put without coming here.)
__device__ inline void finish_stored_put(dcuda_state& gst, protocol::call call, bool notify,
                                         int tag, held_ticket ticket) {
  const target_route to = cached_target_route(gst.put_route_cache);
  if (to.path == protocol::route::host_window) {
    finish_host_window_put(to.counters, notify, tag);
  } else if (notify) {
    notify_along(gst, call, to, tag, true, ticket);
  } else if (to.path == protocol::route::peer) {
    gst.peer_fence_owed = 1;
    gst.peer_acquire_owed =
        protocol::owe_acquire(gst.peer_acquire_owed, gst.put_route_cache.ring_slot);
  }
}

// Thread 0's whole put of at most single_thread_put_limit bytes, after the entry barrier, along
// the route plan_put cached. `ticket`: plan_put's. A put_notify to another GPU carries its
// payload in the ring when it fits and no fence is owed (in the record, or beyond 8 bytes in
// continuation slots too); one to the network that took an entry ticket is a compact entry;
// anything else is copied first and notified after (with the ring ticket, if one was taken).
__device__ inline void thread_put(dcuda_state& gst, protocol::call call, dcuda_win win, int offset,
                                  int size, const void* buffer, bool notify, int tag,
                                  held_ticket ticket) {
  const int slot = protocol::window_slot(win);
  // Everything the local route needs, read at once before the first branch: read one by one
  // behind the route's branches, these were five dependent shared-memory loads between the entry
  // barrier and the payload's store (the local latency path). Volatile, so that none is sunk
  // into a branch. plan_put wrote them, in this thread, before the barrier.
  const auto path = static_cast<protocol::route>(owner_read(gst.put_route_cache.path));
  const std::uint64_t target_base = owner_read(gst.cached_target_base);
  std::uint32_t* const counters = owner_read(gst.put_route_cache.counters);
  if (path == protocol::route::local) {
    thread_copy(reinterpret_cast<void*>(target_base + static_cast<std::uint32_t>(offset)), buffer,
                size);
    if (notify) signal_local_rank(counters, tag);
    return;
  }
  // plan_put read peer_fence_owed in this thread, and only this thread writes it.
  if (ticket.ring && size <= protocol::ring_carry_limit && gst.peer_fence_owed == 0u) {
    if (size > protocol::record_payload_bytes) {
      send_carried_put(gst, call, ticket.ticket, ticket.seen, tag, offset, size, slot, buffer);
      return;
    }
    const std::uint64_t payload = ring_detail::gather_payload(buffer, size);
    ensure_ring_room(gst, call, gst.put_route_cache.ring_slot, ticket);
    // Read after the (rarely taken) wait for room, so that the pointer is not held, and spilled,
    // across that call.
    write_ring_record(gst.put_route_cache.ring, ticket.ticket,
                      carried_record(tag, payload, size, offset, slot,
                                     take_acquire_owed(gst, gst.put_route_cache.ring_slot)));
    return;
  }
  if (gst.put_route_cache.path == static_cast<std::uint32_t>(protocol::route::network)) {
    send_operation_alone(
        gst, call,
        operation_of(gst, put_kind(notify), gst.put_route_cache.target, slot, offset, size, tag),
        buffer, ticket);
    return;
  }
  thread_copy(cached_destination(gst, offset), buffer, size);
  finish_stored_put(gst, call, notify, tag, ticket);
}

// A put_notify the ring carries is always thread 0's (thread_put).
static_assert(protocol::ring_carry_limit <= single_thread_put_limit);

// A put or put_notify after its entry barrier, by every thread of the rank, along the route
// plan_put left in the cache: stores by the rank itself, or a message to the proxy. Every path
// ends with a block barrier (the put is complete on return: the caller may reuse its buffer),
// which also ends the other threads' reads of the cache before thread 0 plans the next put.
__device__ inline void put_along(dcuda_state& gst, protocol::call call, dcuda_win win, int offset,
                                 int size, const void* buffer, bool notify, int tag,
                                 held_ticket ticket) {
  if (size <= single_thread_put_limit) {
    // The latency path: thread 0 stores and notifies; the barrier after it is off the critical
    // path.
    if (threadIdx.x == 0) thread_put(gst, call, win, offset, size, buffer, notify, tag, ticket);
    __syncthreads();
    return;
  }
  if (gst.put_route_cache.path == static_cast<std::uint32_t>(protocol::route::network)) {
    send_remote_operation(gst, call, put_kind(notify), gst.put_route_cache.target,
                          protocol::window_slot(win), offset, size, buffer, tag);
    return;
  }
  if (threadIdx.x == 0) {
    gst.copy_ring_ticket = ticket.ticket;
    gst.copy_ring_seen = ticket.seen;
  }
  block_copy(cached_destination(gst, offset), buffer, static_cast<std::uint64_t>(size));
  __syncthreads();
  // Thread 0 notifies after the barrier, so the release covers every thread's stores. A
  // put_notify to a peer GPU holds plan_put's ticket; notify_along reads it on that route alone.
  // A copy by every thread is longer than the ring carries: plan_put peeked, took no ticket.
  if (threadIdx.x == 0) {
    finish_stored_put(gst, call, notify, tag,
                      held_ticket{gst.copy_ring_ticket, gst.copy_ring_seen, false, true});
  }
}

}  // namespace dcuda::device
