// dcuda_put, dcuda_put_notify, dcuda_notify, dcuda_win_flush (thesis listing 3.5, section 4.5).
// On its own GPU, and on a peer GPU of the node, the rank does everything itself: its threads
// copy into the target's window, then thread 0 notifies: on its GPU by a release atomic on the
// target's counter, on another GPU of the node by a record in the target's ring
// (device/peer_ring.cuh), after a system-scope fence, so the data is visible before the
// notification. A put_notify of at most 4 bytes to another GPU carries its payload in the record
// and needs no fence. Those operations are complete when they return, which gives issue-order
// delivery to every target. A target reached through the network gets the operation through the
// host proxies (device/remote_send.cuh), which deliver in issue order too; dcuda_win_flush waits
// until the proxy has copied out the rank's large payloads.
#pragma once

#include "device/block_copy.cuh"
#include "device/peer_ring.cuh"
#include "device/remote_send.cuh"
#include "device/window.cuh"
#include "protocol/notification_counters.h"

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

// The world rank of `rank` in a window's communicator (`on_world`: DCUDA_COMM_WORLD), from state
// values already loaded. A window's communicator never changes, so the same window and rank
// argument always give the same target: early_put_ticket compares those two alone.
__device__ inline int window_target_rank(bool on_world, int rank, int rank_start) {
  return on_world ? rank : rank + rank_start;
}

struct put_route {
  void* destination;  // meaningless on the network path
  int rank;           // the put's rank argument
  int target;         // world rank
  int slot;           // window slot
  target_route to;
  bool cache_miss;  // thread 0 stores the entries in gst after the copy
  protocol::window_entry own, remote;
};

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

// Stops the run with the precise complaint about a put's window or rank (the checks in their
// order); returns when both are right. Out of line, like report_bad_put.
__device__ __noinline__ inline void report_bad_target(const dcuda_state& gst, protocol::call call,
                                                      dcuda_win win, int rank) {
  const int slot = checked_window_slot(gst, call, win);
  check_rank(gst, call, window_comm(gst, slot), rank);
}

// The window entries of the last put's target and of this rank, from the route cache.
__device__ inline protocol::window_entry cached_remote_entry(const dcuda_state& gst,
                                                             dcuda_win win) {
  return {gst.cached_target_base, gst.cached_target_size, protocol::window_generation(win), 0, 0};
}
__device__ inline protocol::window_entry cached_own_entry(const dcuda_state& gst) {
  return {gst.cached_own_base, gst.cached_own_size, 0, 0, 0};
}

// Whether a put's arguments are wrong, given whether its window and rank are (`target_known`)
// and the window entries of the target and of this rank. Window sizes are ints
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

// Checks the arguments of a put and finds the target address: from the cache in dcuda_state when
// the put goes where the last one went, otherwise from the window table (both entries loaded
// before either is used, so the two global loads overlap). On one warp's critical path every
// dependent step counts: the state a cache hit needs is loaded at once (independent shared
// loads that overlap), and a hit tests every check with one branch.
__device__ inline put_route checked_put_route(const dcuda_state& gst, protocol::call call,
                                              dcuda_win win, int rank, int offset, int size,
                                              const void* buffer) {
  const int slot = protocol::window_slot(win) & (protocol::max_windows - 1);
  const std::uint32_t in_use = gst.windows_in_use;
  const std::uint32_t generation = gst.generation[slot];
  const bool on_world = (gst.world_windows >> slot & 1u) != 0u;
  const int comm_ranks = on_world ? gst.world_size : gst.device_ranks;
  const int rank_start = gst.rank_start;
  const int cached_window = gst.cached_window;
  const int cached_target = gst.put_route_cache.target;

  put_route route{};
  route.rank = rank;
  route.target = window_target_rank(on_world, rank, rank_start);
  route.slot = slot;
  route.cache_miss = cached_window != win || cached_target != route.target;
  if (!route.cache_miss) {
    route.to = cached_target_route(gst.put_route_cache);
    route.own = cached_own_entry(gst);
    route.remote = cached_remote_entry(gst, win);
  }
  const bool target_known = protocol::window_handle_well_formed(win) &&
                            (in_use >> slot & 1u) != 0u &&
                            generation == protocol::window_generation(win) &&
                            static_cast<unsigned>(rank) < static_cast<unsigned>(comm_ranks);
  if (route.cache_miss) {
    // The window table and the route table are indexed by the target: checked first.
    if (!target_known) report_bad_target(gst, call, win, rank);
    route.own = window_of(gst, slot, gst.world_rank);
    route.remote = window_of(gst, slot, route.target);
    route.to = route_to(gst, route.target);
  }
  if (put_arguments_bad(target_known, win, offset, size, buffer, route.remote, route.own)) {
    report_bad_target(gst, call, win, rank);
    report_bad_put(gst, call, win, rank, offset, size, buffer, route.remote.generation,
                   route.remote.size, route.own.base, route.own.size);
  }
  route.destination =
      reinterpret_cast<void*>(route.remote.base + static_cast<std::uint32_t>(offset));
  return route;
}

// After the copy and its barrier (every thread has read the cache by then).
__device__ inline void remember_route(dcuda_state& gst, dcuda_win win, const put_route& route) {
  if (threadIdx.x == 0 && route.cache_miss) {
    gst.cached_window = win;
    gst.cached_rank = route.rank;
    cache_target_route(gst.put_route_cache, route.target, route.to);
    gst.cached_target_base = route.remote.base;
    gst.cached_target_size = route.remote.size;
    gst.cached_own_base = route.own.base;
    gst.cached_own_size = route.own.size;
  }
}

// Thread 0 counts one notification at a target of this GPU. Must follow a block barrier so that
// the release covers every thread's stores (PTX release is cumulative over what the barrier
// ordered before it). A reduction, not an atomic: the sender needs no answer, so it does not wait
// for one.
__device__ inline void signal_local_rank(std::uint32_t* counters, int tag) {
  asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counters + tag) : "memory");
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

// Thread 0, before the entry barrier of a put_notify: when the route cache shows that the put
// takes a latency path, its ticket is taken now, so that the atomic's round trip overlaps the
// barrier and the argument checks: to another GPU of the node with the payload carried in the
// record, the ring's ticket; through the network as a compact command-channel entry, the entry's
// ticket. The put then always uses this ticket, or the checks stop the run: a ticket taken is
// never left unused, which would stall the target's ring or the proxy. The cache is thread 0's
// to write, so thread 0 may read it before the barrier; no other thread may (thread 0 writes it
// after the last barrier of a put), hence owner_read.
//
// Every field is read first and tested once: a test after each read would make each read wait
// for the one before, and the atomic for all of them. The payload's line is prefetched into L1
// as well (a prefetch returns no data, so nothing is read ahead of the barrier; the load after
// the checks then finds the line).
__device__ inline held_ticket early_put_ticket(const dcuda_state& gst, dcuda_win win, int rank,
                                               int size, const void* buffer) {
  if (threadIdx.x != 0) return {};
  const int cached_window = owner_read(gst.cached_window);
  const int cached_rank = owner_read(gst.cached_rank);
  const std::uint32_t cached_path = owner_read(gst.put_route_cache.path);
  const std::uint32_t fence_owed = owner_read(gst.peer_fence_owed);
  const std::uint32_t ring_slot = owner_read(gst.put_route_cache.ring_slot);
  const std::uint32_t* const ring_taken_here = owner_read(gst.ring_taken_here);
  std::uint32_t* const ring_tails = owner_read(gst.ring_tails);
  // The same window and rank argument mean the same target (a window's communicator is fixed).
  if (win != cached_window || rank != cached_rank) return {};
  held_ticket ticket{};
  if (cached_path == static_cast<std::uint32_t>(protocol::route::peer) &&
      static_cast<unsigned>(size) <= static_cast<unsigned>(protocol::ring_payload_limit) &&
      fence_owed == 0u) {
    ticket = take_ring_ticket(ring_taken_here, ring_tails, ring_slot);
  } else if (cached_path == static_cast<std::uint32_t>(protocol::route::network) &&
             static_cast<unsigned>(size) <=
                 static_cast<unsigned>(protocol::compact_payload_bytes)) {
    ticket = take_channel_ticket(gst.commands);
  } else {
    return {};
  }
  asm volatile("prefetch.L1 [%0];" ::"l"(buffer));
  return ticket;
}

// The same for dcuda_notify, when it notifies the rank the last notify went to.
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

// Thread 0's part of a put of at most single_thread_put_limit bytes. A put_notify to another GPU
// of at most ring_payload_limit bytes, with no fence owed, carries its payload in the record;
// anything else is copied first and notified after a fence. (Thread 0 decides alone: the other
// threads only wait at the barrier after it, and peer_fence_owed is thread 0's.)
__device__ inline void thread_put(dcuda_state& gst, protocol::call call, const put_route& route,
                                  int offset, int size, const void* buffer, bool notify, int tag,
                                  held_ticket early) {
  const protocol::route path = route.to.path;
  if (notify && path == protocol::route::peer && size <= protocol::ring_payload_limit &&
      gst.peer_fence_owed == 0u) {
    send_carried_put(gst, call, route.to.ring.ring, route.to.ring.slot, tag, buffer, size, offset,
                     route.slot, early);
    return;
  }
  thread_copy(route.destination, buffer, size);
  if (notify) {
    notify_along(gst, call, route.to, tag, true, early);
  } else if (path == protocol::route::peer) {
    gst.peer_fence_owed = 1;
  }
}

// Puts up to this size are copied by thread 0 alone (thread_copy), without the block barrier
// between the copy and the notification.
inline constexpr int single_thread_put_limit = 16;

// A put or put_notify: stores by the rank itself, or a message to the proxy. `early`: thread 0's
// ticket from early_put_ticket (the put then takes a latency path: peer ring or compact entry).
// `sent`: thread 0 has sent the put already (send_cached_carried_put); it only meets the others
// at the barrier of the small puts' path, which they take for that put too.
__device__ inline void put_along(dcuda_state& gst, protocol::call call, dcuda_win win,
                                 const put_route& route, int offset, int size, void* buffer,
                                 bool notify, int tag, held_ticket early = {}, bool sent = false) {
  const protocol::route path = sent ? protocol::route::peer : route.to.path;
  if (path == protocol::route::network) {
    send_remote_operation(
        gst, call, notify ? protocol::operation_kind::put_notify : protocol::operation_kind::put,
        route.target, route.slot, offset, size, buffer, tag, early);
  } else if (size <= single_thread_put_limit) {
    // The latency path: thread 0 stores and notifies; the barrier after it is off the critical
    // path.
    if (threadIdx.x == 0 && !sent) {
      thread_put(gst, call, route, offset, size, buffer, notify, tag, early);
    }
    __syncthreads();   // complete on return: thread 0 has read the buffer, the caller may reuse it
    if (sent) return;  // thread 0 made no route to remember
  } else {
    block_copy(route.destination, buffer, static_cast<std::uint64_t>(size));
    __syncthreads();  // complete on return: the caller may reuse its buffer at once
    if (notify) {
      notify_along(gst, call, route.to, tag, true);
    } else if (threadIdx.x == 0 && path == protocol::route::peer) {
      gst.peer_fence_owed = 1;
    }
  }
  remember_route(gst, win, route);
}

// Thread 0's whole put_notify when early_put_ticket took a ring ticket: the cache showed that
// the put goes where the last one went, to another GPU of the node, with a payload the record
// carries and no fence owed. The arguments are checked against the cached entries with one
// branch (on failure the general checks report the precise complaint), then the payload is read
// and the record stored: on the peer ping-pong this is the latency path, and each branch and
// dependent load of the general path (checked_put_route, put_along, thread_put) costs it time.
// The other threads of the rank go through the general path, which for this put only meets the
// barrier after it.
__device__ inline void send_cached_carried_put(dcuda_state& gst, dcuda_win win, int rank,
                                               int offset, int size, const void* buffer, int tag,
                                               held_ticket ticket) {
  constexpr protocol::call call = protocol::call::put_notify;
  const int slot = protocol::window_slot(win) & (protocol::max_windows - 1);
  const bool on_world = (gst.world_windows >> slot & 1u) != 0u;
  const int comm_ranks = on_world ? gst.world_size : gst.device_ranks;
  // Bitwise, not short-circuit: every load is issued at once and one branch tests them all.
  const bool target_known =
      protocol::window_handle_well_formed(win) & ((gst.windows_in_use >> slot & 1u) != 0u) &
      (gst.generation[slot] == protocol::window_generation(win)) &
      (static_cast<unsigned>(rank) < static_cast<unsigned>(comm_ranks)) &
      (static_cast<unsigned>(tag) < static_cast<unsigned>(protocol::tag_count));
  const protocol::window_entry remote = cached_remote_entry(gst, win);
  const protocol::window_entry own = cached_own_entry(gst);
  // The payload is read while the other checks are still being computed: its load is the longest
  // step here. It reads the caller's buffer only once the buffer is known to lie in this rank's
  // window (0 <= size <= 4 here), otherwise this rank's state in shared memory, so that a bad
  // buffer stops the run with the checks' message below and never faults in this load.
  const std::uint64_t source_offset = reinterpret_cast<std::uint64_t>(buffer) - own.base;
  const bool source_inside =
      (source_offset <= own.size) & (static_cast<std::uint64_t>(size) <= own.size - source_offset);
  const std::uint32_t payload =
      ring_detail::gather_payload(source_inside ? buffer : static_cast<const void*>(&gst), size);
  if (put_arguments_bad(target_known, win, offset, size, buffer, remote, own)) {
    check_tag(gst, call, tag);
    report_bad_target(gst, call, win, rank);
    report_bad_put(gst, call, win, rank, offset, size, buffer, remote.generation, remote.size,
                   own.base, own.size);
  }
  ensure_ring_room(gst, call, gst.put_route_cache.ring_slot, ticket);
  // Read after the (rarely taken) wait for room, so that the pointer is not held, and spilled,
  // across that call.
  char* const ring = owner_read(gst.put_route_cache.ring);
  write_ring_record(ring, ticket.ticket, carried_record(tag, payload, size, offset, slot));
}

}  // namespace dcuda::device

__device__ inline void dcuda_put(dcuda_state& gst, dcuda_win win, int rank, int offset, int size,
                                 void* buffer) {
  using namespace dcuda;
  device::opaque_arguments(win, rank, offset, size);
  device::enter_collective(gst.ctx, protocol::call::put);
  const device::put_route route =
      device::checked_put_route(gst, protocol::call::put, win, rank, offset, size, buffer);
  device::put_along(gst, protocol::call::put, win, route, offset, size, buffer, false, 0);
}

__device__ inline void dcuda_put_notify(dcuda_state& gst, dcuda_win win, int rank, int offset,
                                        int size, void* buffer, int tag) {
  using namespace dcuda;
  device::opaque_arguments(win, rank, offset, size, tag);
  const device::held_ticket early = device::early_put_ticket(gst, win, rank, size, buffer);
  device::enter_collective(gst.ctx, protocol::call::put_notify);
  // Thread 0 alone may have sent it already (it alone holds a ticket); the rank then meets at
  // put_along's barrier, one call site for every thread.
  const bool sent = early.held && early.ring;
  device::put_route route;  // thread 0's, once sent, is never read (put_along)
  if (sent) {
    device::send_cached_carried_put(gst, win, rank, offset, size, buffer, tag, early);
  } else {
    device::check_tag(gst, protocol::call::put_notify, tag);
    route =
        device::checked_put_route(gst, protocol::call::put_notify, win, rank, offset, size, buffer);
  }
  device::put_along(gst, protocol::call::put_notify, win, route, offset, size, buffer, true, tag,
                    early, sent);
}

__device__ inline void dcuda_notify(dcuda_state& gst, int rank, dcuda_comm comm, int tag) {
  using namespace dcuda;
  device::opaque_arguments(rank, tag);
  const int target = device::world_rank_of(gst, comm, rank);
  const device::held_ticket early = device::early_notify_ticket(gst, target);
  device::enter_collective(gst.ctx, protocol::call::notify);
  device::check_comm(gst, protocol::call::notify, comm);
  device::check_tag(gst, protocol::call::notify, tag);
  device::check_rank(gst, protocol::call::notify, comm, rank);
  if (threadIdx.x != 0) return;  // a notify is thread 0's work alone
  const device::target_route to = device::notify_route_to(gst, target);
  if (to.path == protocol::route::network) {
    device::send_remote_operation(gst, protocol::call::notify, protocol::operation_kind::notify,
                                  target, -1, 0, 0, nullptr, tag, early);
  } else {
    device::notify_along(gst, protocol::call::notify, to, tag, false, early);
  }
}

__device__ inline void dcuda_win_flush(dcuda_state& gst, dcuda_win win) {
  using namespace dcuda;
  device::enter_collective(gst.ctx, protocol::call::win_flush);
  device::checked_window_slot(gst, protocol::call::win_flush, win);
  if (gst.uses_network) device::wait_for_staged_puts(gst, protocol::call::win_flush);
}
