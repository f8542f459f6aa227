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

#include "dcuda/detail/device/block_copy.cuh"
#include "dcuda/detail/device/call_linkage.cuh"
#include "dcuda/detail/device/peer_ring.cuh"
#include "dcuda/detail/device/remote_send.cuh"
#include "dcuda/device/window.cuh"
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
// argument always give the same target: plan_put keys the route cache on those two alone.
__device__ inline int window_target_rank(bool on_world, int rank, int rank_start) {
  return on_world ? rank : rank + rank_start;
}

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

// Thread 0, before a put's entry barrier: checks the arguments, leaves the put's route in the
// route cache (gst.cached_*), where every thread reads it after the barrier, and takes the ticket
// of a latency path (returned; none otherwise).
//
// Why thread 0 alone, and before the barrier: the checks, the route and their window entries are
// a dozen values. Computed by every thread, they would stay live across the block copy of a
// large put in every thread, and a 1024-thread rank (64 registers) would spill its caller's
// loop state to local memory around each put, which costs more than the payload at 64 KiB
// (docs/performance.md, "The put path's registers"). Spills in thread 0's branch cost one lane.
// Before the barrier, the checks and the ticket atomic's round trip overlap the wait for the
// other threads. Nothing here reads the caller's buffer: the barrier orders the rank's stores to
// it before the copy.
//
// The cache is keyed on the window and the rank argument; only thread 0 reads it before the
// barrier and writes it, and every put ends with a block barrier after the other threads have
// read it (put_along), so a write here never races their reads of the previous put's route.
// Every field is read first and tested once: a test after each read would make each read wait
// for the one before.
__device__ inline held_ticket plan_put(dcuda_state& gst, protocol::call call, dcuda_win win,
                                       int rank, int offset, int size, const void* buffer,
                                       bool notify, int tag) {
  const int slot = protocol::window_slot(win) & (protocol::max_windows - 1);
  const bool on_world = (gst.world_windows >> slot & 1u) != 0u;
  const int comm_ranks = on_world ? gst.world_size : gst.device_ranks;
  // Bitwise, not short-circuit: every load is issued at once and one branch tests them all.
  const bool target_known =
      protocol::window_handle_well_formed(win) & ((gst.windows_in_use >> slot & 1u) != 0u) &
      (gst.generation[slot] == protocol::window_generation(win)) &
      (static_cast<unsigned>(rank) < static_cast<unsigned>(comm_ranks)) &
      (static_cast<unsigned>(tag) < static_cast<unsigned>(protocol::tag_count));
  const bool hit = win == owner_read(gst.cached_window) && rank == owner_read(gst.cached_rank);
  target_route to{};
  protocol::window_entry remote{};
  protocol::window_entry own{};
  if (hit) {
    to = {owner_read(gst.put_route_cache.counters),
          static_cast<protocol::route>(owner_read(gst.put_route_cache.path)),
          {owner_read(gst.put_route_cache.ring), owner_read(gst.put_route_cache.ring_slot)}};
    remote = {owner_read(gst.cached_target_base), owner_read(gst.cached_target_size),
              protocol::window_generation(win), 0, 0};
    own = {owner_read(gst.cached_own_base), owner_read(gst.cached_own_size), 0, 0, 0};
  } else {
    // The window table and the route table are indexed by the target: checked first.
    if (!target_known) report_bad_target(gst, call, win, rank, tag);
    const int target = window_target_rank(on_world, rank, gst.rank_start);
    own = window_of(gst, slot, gst.world_rank);
    remote = window_of(gst, slot, target);
    to = route_to(gst, target);
    // Cached before the checks below: a put that fails them stops the run.
    gst.cached_window = win;
    gst.cached_rank = rank;
    cache_target_route(gst.put_route_cache, target, to);
    gst.cached_target_base = remote.base;
    gst.cached_target_size = remote.size;
    gst.cached_own_base = own.base;
    gst.cached_own_size = own.size;
  }
  if (put_arguments_bad(target_known, win, offset, size, buffer, remote, own)) {
    report_bad_target(gst, call, win, rank, tag);
    report_bad_put(gst, call, win, rank, offset, size, buffer, remote.generation, remote.size,
                   own.base, own.size);
  }
  held_ticket ticket{};
  if (notify && to.path == protocol::route::peer && size <= protocol::ring_payload_limit &&
      gst.peer_fence_owed == 0u) {
    // The payload travels in the record (no fence).
    ticket = take_ring_ticket(gst.ring_taken_here, gst.ring_tails, to.ring.slot);
  } else if (to.path == protocol::route::network && size <= protocol::compact_payload_bytes) {
    ticket = take_channel_ticket(gst.commands);
  } else {
    return ticket;
  }
  // The payload's line into L1 (a prefetch returns no data, so nothing is read ahead of the
  // barrier; the load after it then finds the line).
  asm volatile("prefetch.L1 [%0];" ::"l"(buffer));
  return ticket;
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

// What plan_put cached for the put now under way (after its entry barrier).
__device__ inline void* cached_destination(const dcuda_state& gst, int offset) {
  return reinterpret_cast<void*>(gst.cached_target_base + static_cast<std::uint32_t>(offset));
}
__device__ inline protocol::operation_kind put_kind(bool notify) {
  return notify ? protocol::operation_kind::put_notify : protocol::operation_kind::put;
}

// Thread 0, once the rank has stored a put's data at a target of the node (after the block
// barrier, if every thread stored): the notification, which must not overtake the data, or, for
// a plain put to another GPU, the fence the next record to a peer owes.
__device__ inline void finish_stored_put(dcuda_state& gst, protocol::call call, bool notify,
                                         int tag) {
  if (notify) {
    notify_along(gst, call, cached_target_route(gst.put_route_cache), tag, true);
  } else if (gst.put_route_cache.path == static_cast<std::uint32_t>(protocol::route::peer)) {
    gst.peer_fence_owed = 1;
  }
}

// Thread 0's whole put of at most single_thread_put_limit bytes, after the entry barrier, along
// the route plan_put cached. `ticket`: plan_put's. A put_notify to another GPU that took a ring
// ticket carries its payload in the record; one to the network that took an entry ticket is a
// compact entry; anything else is copied first and notified after.
__device__ inline void thread_put(dcuda_state& gst, protocol::call call, dcuda_win win, int offset,
                                  int size, const void* buffer, bool notify, int tag,
                                  held_ticket ticket) {
  const int slot = protocol::window_slot(win);
  if (ticket.held && ticket.ring) {
    const std::uint32_t payload = ring_detail::gather_payload(buffer, size);
    ensure_ring_room(gst, call, gst.put_route_cache.ring_slot, ticket);
    // Read after the (rarely taken) wait for room, so that the pointer is not held, and spilled,
    // across that call.
    write_ring_record(gst.put_route_cache.ring, ticket.ticket,
                      carried_record(tag, payload, size, offset, slot));
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
  finish_stored_put(gst, call, notify, tag);
}

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
  block_copy(cached_destination(gst, offset), buffer, static_cast<std::uint64_t>(size));
  __syncthreads();
  // Thread 0 notifies after the barrier, so the release covers every thread's stores.
  if (threadIdx.x == 0) finish_stored_put(gst, call, notify, tag);
}

}  // namespace dcuda::device

__device__ DCUDA_CALL_LINKAGE void dcuda_put(dcuda_state& gst, dcuda_win win, int rank, int offset,
                                             int size, void* buffer) {
  using namespace dcuda;
  device::opaque_arguments(win, rank, offset, size);
  device::held_ticket ticket{};
  if (threadIdx.x == 0) {
    ticket = device::plan_put(gst, protocol::call::put, win, rank, offset, size, buffer, false, 0);
  }
  device::enter_collective(gst.ctx, protocol::call::put);
  device::put_along(gst, protocol::call::put, win, offset, size, buffer, false, 0, ticket);
}

__device__ DCUDA_CALL_LINKAGE void dcuda_put_notify(dcuda_state& gst, dcuda_win win, int rank,
                                                    int offset, int size, void* buffer, int tag) {
  using namespace dcuda;
  device::opaque_arguments(win, rank, offset, size, tag);
  device::held_ticket ticket{};
  if (threadIdx.x == 0) {
    ticket = device::plan_put(gst, protocol::call::put_notify, win, rank, offset, size, buffer,
                              true, tag);
  }
  device::enter_collective(gst.ctx, protocol::call::put_notify);
  device::put_along(gst, protocol::call::put_notify, win, offset, size, buffer, true, tag, ticket);
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
    device::send_operation_alone(
        gst, protocol::call::notify,
        device::operation_of(gst, protocol::operation_kind::notify, target, -1, 0, 0, tag), nullptr,
        early);
  } else {
    device::notify_along(gst, protocol::call::notify, to, tag, false, early);
  }
}

__device__ DCUDA_CALL_LINKAGE void dcuda_win_flush(dcuda_state& gst, dcuda_win win) {
  using namespace dcuda;
  device::enter_collective(gst.ctx, protocol::call::win_flush);
  device::checked_window_slot(gst, protocol::call::win_flush, win);
  if (gst.uses_network) device::wait_for_staged_puts(gst, protocol::call::win_flush);
}
