// The machinery of the global-access calls (dcuda/device/global_access.cuh): where a get or an
// atomic lands, after the checks every one makes, and the checks of global-pointer arithmetic.
// A get or an atomic reads the target's memory itself, through the address its window has in
// this GPU's table: a rank of this GPU, or a rank of a peer GPU of the node, whose window is
// mapped into this GPU's address space when it is created. Ranks reached through the network
// have no such address.
#pragma once

#include <climits>
#include <cstdint>

#include "dcuda/detail/device/block_copy.cuh"
#include "dcuda/detail/device/code_generation.cuh"
#include "dcuda/detail/device/communicators.cuh"
#include "dcuda/detail/device/fail.cuh"
#include "dcuda/detail/device/memory_order.cuh"
#include "dcuda/detail/device/put_path.cuh"
#include "dcuda/detail/device/rank_entry.cuh"
#include "dcuda/detail/device/target_route.cuh"
#include "dcuda/detail/device/window_slots.cuh"
#include "dcuda/global_pointer.h"

namespace dcuda::device {

// The world rank a global pointer's unit names, with its window's entry there, once the window
// is one the caller holds and the unit is a rank of its communicator (the call fails otherwise).
struct global_target {
  int world_rank;
  protocol::window_entry entry;
};
__device__ inline global_target checked_global_target(const dcuda_state& gst, protocol::call call,
                                                      dcuda_win win, int rank) {
  const int slot = checked_window_slot(gst, call, win);
  const dcuda_comm comm = window_comm(gst, slot);
  check_rank(gst, call, comm, rank);
  const int target = world_rank_of(gst, comm, rank);
  const protocol::window_entry entry = window_of(gst, slot, target);
  if (entry.generation != protocol::window_generation(win)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::window_not_on_target, win, rank);
  }
  return {target, entry};
}

// Where a global pointer leads, found without a complaint (dcuda_gptr_is_local,
// dcuda_gptr_address): `found` once the window is one the caller holds and the unit a rank of its
// communicator.
struct gptr_destination {
  bool found;
  int slot;
  int world_rank;
};
__device__ inline gptr_destination find_gptr_destination(const dcuda_state& gst, dcuda_gptr p) {
  if (!holds_window(gst, p.window)) return {false, -1, -1};
  const int slot = protocol::window_slot(p.window);
  const dcuda_comm comm = window_comm(gst, slot);
  if (p.unit < 0 || p.unit >= comm_size(gst, comm)) return {false, slot, -1};
  return {true, slot, world_rank_of(gst, comm, p.unit)};
}

// Thread 0, when a get or an atomic misses the access cache (below): the address this GPU reads
// and writes for `size` bytes at `offset` in rank `rank`'s part of window `win`, after the
// checks (window, rank, range, a target of this node); the call fails with the precise
// complaint otherwise. The target's part is left in the cache. Out of line: the checks'
// arguments would otherwise share the caller's registers.
__device__ __noinline__ inline std::uint64_t refresh_global_access(dcuda_state& gst,
                                                                   protocol::call call,
                                                                   dcuda_win win, int rank,
                                                                   std::uint64_t offset,
                                                                   std::int64_t size) {
  const global_target target = checked_global_target(gst, call, win, rank);
  if (size < 0) fail(gst.ctx, gst.world_rank, call, protocol::error_code::negative_size, size);
  // An offset past INT64_MAX turns negative here, which the range check refuses.
  const auto signed_offset = static_cast<std::int64_t>(offset);
  if (!protocol::range_inside_window(signed_offset, size, target.entry.size)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::target_range_outside, signed_offset,
         size, static_cast<std::int64_t>(target.entry.size), rank);
  }
  const protocol::route path = route_to(gst, target.world_rank).path;
  if (path != protocol::route::local && path != protocol::route::peer) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::target_off_node, target.world_rank);
  }
  gst.access_window = win;
  gst.access_rank = rank;
  gst.access_base = target.entry.base;
  gst.access_size = target.entry.size;
  return target.entry.base + offset;
}

// Thread 0: as refresh_global_access, from the access cache when the window and the rank are
// those of the last get or atomic. A hit needs no load beyond shared memory: a window's entries
// change only through dcuda_win_create and dcuda_win_free, a new window has a new handle, and
// dcuda_win_free empties the cache of its slot (so a freed handle misses and is refused). A
// negative handle never hits: the empty cache's key is DCUDA_WIN_NONE, which a call may pass too.
// The reads are owner_read: thread 0 makes them before the entry barrier.
__device__ inline std::uint64_t global_access_address(dcuda_state& gst, protocol::call call,
                                                      dcuda_win win, int rank, std::uint64_t offset,
                                                      std::int64_t size) {
  // Bitwise, not short-circuit: the loads are issued at once and tested with one branch.
  const bool hit =
      (win >= 0) & (win == owner_read(gst.access_window)) & (rank == owner_read(gst.access_rank));
  const std::uint64_t base = owner_read(gst.access_base);
  const std::uint64_t part = owner_read(gst.access_size);
  if (hit & (size >= 0) &
      protocol::range_inside_window(static_cast<std::int64_t>(offset), size, part)) {
    return base + offset;
  }
  return refresh_global_access(gst, call, win, rank, offset, size);
}

// As global_access_address, for an atomic on a word of `word_bytes` (4 or 8) bytes, whose address
// must be a multiple of its size: an aligned offset in a window whose base is aligned (a window's
// base is wherever its rank put it, so both count).
__device__ inline std::uint64_t atomic_word_address(dcuda_state& gst, protocol::call call,
                                                    dcuda_gptr target, int word_bytes) {
  const std::uint64_t address =
      global_access_address(gst, call, target.window, target.unit, target.offset, word_bytes);
  if (address % static_cast<std::uint64_t>(word_bytes) != 0u) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::misaligned_atomic,
         static_cast<std::int64_t>(target.offset), word_bytes, static_cast<std::int64_t>(address));
  }
  return address;
}

// Thread 0, before a put through a global pointer: the window offset as the put path takes it
// (an int, as dcuda_put's), or the complaint about an offset no window reaches.
__device__ inline int put_offset_of(const dcuda_state& gst, protocol::call call, dcuda_gptr to,
                                    int size) {
  if (to.offset <= static_cast<std::uint64_t>(INT_MAX)) return static_cast<int>(to.offset);
  const global_target target = checked_global_target(gst, call, to.window, to.unit);
  fail(gst.ctx, gst.world_rank, call, protocol::error_code::target_range_outside,
       static_cast<std::int64_t>(to.offset), size, static_cast<std::int64_t>(target.entry.size),
       to.unit);
}

// `p` moved by `bytes` through its window (dcuda_gptr_advance), stepping by the size of the
// part of the rank it starts at. Every rank of the communicator it passes or lands in must have a
// part of that size (a team-aligned window), or the call fails: a pointer stepped by the wrong
// size would name the wrong bytes. A pointer that lands outside the communicator is returned as
// it is: the call that uses it refuses its rank.
__device__ __noinline__ inline dcuda_gptr checked_gptr_advance(const dcuda_state& gst, dcuda_gptr p,
                                                               std::int64_t bytes) {
  constexpr protocol::call call = protocol::call::gptr_add;
  const std::uint64_t unit_bytes = checked_global_target(gst, call, p.window, p.unit).entry.size;
  if (bytes == 0) return p;
  if (unit_bytes == 0) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::uneven_window, p.window, p.unit, 0,
         0);
  }
  const dcuda_gptr moved = dcuda_gptr_advance(p, bytes, unit_bytes);
  const int slot = protocol::window_slot(p.window);
  const dcuda_comm comm = window_comm(gst, slot);
  // Outside the communicator (rank -1 too, where the step overflowed) the pointer names no bytes,
  // so the sizes of the ranks on the way do not matter.
  if (moved.unit < 0 || moved.unit >= comm_size(gst, comm)) return moved;
  const int first = moved.unit < p.unit ? moved.unit : p.unit + 1;
  const int end = moved.unit < p.unit ? p.unit - 1 : moved.unit;
  for (int unit = first; unit <= end; ++unit) {
    const protocol::window_entry there = window_of(gst, slot, world_rank_of(gst, comm, unit));
    if (there.size != unit_bytes) {
      fail(gst.ctx, gst.world_rank, call, protocol::error_code::uneven_window, p.window, unit,
           static_cast<std::int64_t>(there.size), static_cast<std::int64_t>(unit_bytes));
    }
  }
  return moved;
}

// A get, by every thread of the rank: thread 0 finds the source before the entry barrier (its
// checks overlap the wait for the other threads); after the barrier the bytes are copied, by
// thread 0 alone up to single_thread_put_limit bytes (one load and one store, as a small put), by
// every thread beyond.
//
// The copy's loads are relaxed at system scope, which this SM's L1 never serves: a get repeated
// on the same bytes (a rank polling a word through get) sees what the target's memory holds now.
// An acquire fence would do the same by emptying L1, and every later load of the rank (the
// access cache's misses, the caller's own data) would then come from L2.
__device__ inline void get(dcuda_state& gst, dcuda_gptr from, int size, void* buffer) {
  // The source, as thread 0 found it. Written before the entry barrier: the get before read it
  // before its last barrier, which thread 0 has passed.
  __shared__ std::uint64_t source;
  constexpr protocol::call call = protocol::call::get;
  if (threadIdx.x == 0) {
    source = global_access_address(gst, call, from.window, from.unit, from.offset, size);
  }
  enter_rank_call(gst.ctx, call);
  const auto* from_address = reinterpret_cast<const void*>(source);
  if (size <= single_thread_put_limit) {
    if (threadIdx.x == 0) thread_copy<fresh_loads>(buffer, from_address, size);
  } else {
    block_copy<fresh_loads>(buffer, from_address, static_cast<std::uint64_t>(size));
  }
  __syncthreads();  // complete on return, and `source` free for the next get
}

}  // namespace dcuda::device
