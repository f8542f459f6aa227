// The path of dcuda_put_typed and dcuda_put_notify_typed: thread 0 checks both layouts and both
// typed ranges and finds the target's route before the entry barrier; after it, every warp of
// the rank copies its share from the source's layout straight into the target's (a target on
// this GPU or on a peer GPU of the node: no staging), then thread 0 notifies as a put does. A
// target reached through the network gets the put from the host proxy, which packs the source in
// pieces (protocol/typed_piece.h).
#pragma once

#include "dcuda/detail/device/put_path.cuh"
#include "dcuda/detail/device/remote_send.cuh"
#include "dcuda/detail/device/typed_copy.cuh"

namespace dcuda::device {

// A typed put's arguments, as the calls take them.
struct typed_put {
  dcuda_win win;
  int rank;
  int offset;  // the target element 0's origin, in bytes from the target window's base
  int target_count;
  dcuda_datatype target_type;
  const void* source;  // the source element 0's origin
  int source_count;
  dcuda_datatype source_type;
};

// Thread 0, before the entry barrier: checks everything and caches the route and the window
// entries (the put route cache, as refresh_put_route leaves them). Typed puts move many bytes:
// this is not a latency path, and every typed put looks its route up again. No ring ticket is
// taken here: records are taken in ticket order, and a ticket held through a long copy would
// hold back every other rank's record to the same GPU; the notification takes its own after the
// copy.
__device__ __noinline__ inline void plan_typed_put(dcuda_state& gst, protocol::call call,
                                                   const typed_put& put, int tag) {
  const int slot = protocol::window_slot(put.win) & (protocol::max_windows - 1);
  if (!put_target_known(gst, put.win, slot, put.rank, tag)) {
    report_bad_target(gst, call, put.win, put.rank, tag);
  }
  if (put.source_count < 0) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::negative_count, put.source_count);
  }
  if (put.target_count < 0) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::negative_count, put.target_count);
  }
  const protocol::type_layout& from = checked_layout(gst, call, put.source_type);
  const protocol::type_layout& to =
      checked_written_layout(gst, call, put.target_type, put.target_count);
  check_typed_span(gst, call, from, put.source_count);
  check_typed_span(gst, call, to, put.target_count);
  const std::uint64_t source_bytes = static_cast<std::uint64_t>(put.source_count) * from.size;
  const std::uint64_t target_bytes = static_cast<std::uint64_t>(put.target_count) * to.size;
  if (source_bytes != target_bytes) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::typed_sizes_differ,
         static_cast<std::int64_t>(source_bytes), static_cast<std::int64_t>(target_bytes));
  }
  const bool on_world = (gst.world_windows >> slot & 1u) != 0u;
  const int target = window_target_rank(on_world, put.rank, gst.rank_start);
  const protocol::window_entry own = window_of(gst, slot, gst.world_rank);
  const protocol::window_entry remote = window_of(gst, slot, target);
  if (remote.generation != protocol::window_generation(put.win)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::window_not_on_target, put.win,
         put.rank);
  }
  const target_route route = route_to(gst, target);
  // The bytes each side touches, from its element 0's origin (empty when nothing moves).
  std::int64_t target_low = 0, target_high = 0, source_low = 0, source_high = 0;
  const bool target_fits = protocol::typed_range(to, static_cast<std::uint64_t>(put.target_count),
                                                 target_low, target_high);
  const bool source_fits = protocol::typed_range(from, static_cast<std::uint64_t>(put.source_count),
                                                 source_low, source_high);
  // Every byte the target's elements touch lies in the target's window; an empty typed put, like
  // an empty put, needs an offset inside it (or at its end).
  const std::int64_t window_bytes = static_cast<std::int64_t>(remote.size);
  const bool target_empty = target_high == target_low;
  if (!target_fits || (target_empty && (put.offset < 0 || put.offset > window_bytes)) ||
      (!target_empty && (put.offset + target_low < 0 || put.offset + target_high > window_bytes))) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::target_range_outside,
         put.offset + target_low, target_high - target_low, window_bytes, put.rank);
  }
  // Likewise the source's bytes in the caller's window. Its element 0 may lie anywhere: the
  // distance is checked before it is added to anything.
  const std::uint64_t source_address = reinterpret_cast<std::uint64_t>(put.source);
  const std::int64_t source_start = static_cast<std::int64_t>(source_address - own.base);
  constexpr std::int64_t reach = std::int64_t{1} << 62;
  if (!source_fits ||
      (source_high > source_low &&
       (source_start > reach || source_start < -reach || source_start + source_low < 0 ||
        source_start + source_high > static_cast<std::int64_t>(own.size)))) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::source_outside_window,
         static_cast<std::int64_t>(source_address) + source_low,
         static_cast<std::int64_t>(own.base), static_cast<std::int64_t>(own.size),
         source_high - source_low);
  }
  cache_put_route(gst, put.win, put.rank, target, route, remote, own);
}

// Thread 0: a typed put to a rank reached through the network, handed to the proxy, which packs
// it in pieces (protocol/typed_piece.h); plan_typed_put checked it and cached the target.
__device__ inline void send_typed_put_to_network(dcuda_state& gst, protocol::call call,
                                                 const typed_put& put, bool notify, int tag) {
  const protocol::type_layout& to = *protocol::committed_layout(gst.ctx->types, put.target_type);
  const auto kind =
      notify ? protocol::operation_kind::typed_put_notify : protocol::operation_kind::typed_put;
  protocol::remote_operation op = operation_of(
      gst, kind, gst.put_route_cache.target,
      protocol::window_slot(put.win) & (protocol::max_windows - 1), put.offset, 0, tag);
  op.size = static_cast<std::int64_t>(static_cast<std::uint64_t>(put.target_count) * to.size);
  const protocol::typed_put_request request{put.source_type.id, put.source_type.generation,
                                            put.target_type.id, put.target_type.generation,
                                            put.source_count,   put.target_count};
  send_typed_put_request(gst, call, op, put.source, request);
}

// Every thread, after the entry barrier: the rank's share of the copy into the target's window
// (plan_typed_put checked both types and cached the target), the block barrier, then thread 0's
// notification (which takes its ring ticket now) or the fence a plain put to a peer leaves owed.
// The source and the target must not overlap: the warps' chunks would race.
__device__ inline void typed_put_along(dcuda_state& gst, protocol::call call, const typed_put& put,
                                       bool notify, int tag) {
  if (gst.put_route_cache.path == static_cast<std::uint32_t>(protocol::route::network)) {
    if (threadIdx.x == 0) send_typed_put_to_network(gst, call, put, notify, tag);
    __syncthreads();
    return;
  }
  const protocol::type_layout& from = *protocol::committed_layout(gst.ctx->types, put.source_type);
  const protocol::type_layout& to = *protocol::committed_layout(gst.ctx->types, put.target_type);
  char* const target = reinterpret_cast<char*>(gst.cached_target_base) + put.offset;
  copy_in_rank(protocol::plan_typed_copy(target, to, static_cast<const char*>(put.source), from,
                                         static_cast<std::uint64_t>(put.source_count)));
  __syncthreads();
  if (threadIdx.x == 0) finish_stored_put(gst, call, notify, tag, held_ticket{});
}

}  // namespace dcuda::device
