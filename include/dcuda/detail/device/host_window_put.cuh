// dcuda_put and dcuda_put_notify into a host window (dcuda/host_stream.h). A host window's handle
// never passes the put's fast check (its slot is no device window's), so thread 0 comes here from
// the out-of-line refresh of the put route (put_path.cuh) and leaves a route of its own kind in the
// route cache, route::host_window: the rank then copies into the target process's buffer (on this
// GPU, or on a peer GPU of the node over NVLink) as for any target of the node, and thread 0
// counts the notification in the target rank's host-initiated counters, where the target's stream
// waits (dcuda_wait_notifications_on_stream) and its own dcuda_wait_notifications find it. A
// process reached through the network gets route::network instead: the operation goes to the host
// proxy with the host window's slot, as a put into a device window does, and the target's proxy
// lands it in its buffer and counts it in the same counters. The latency paths of device windows
// test nothing more for it.
#pragma once

#include "dcuda/detail/device/fail.cuh"
#include "dcuda/detail/device/memory_order.cuh"
#include "dcuda/detail/protocol/host_window_view.h"
#include "dcuda/detail/protocol/routes.h"
#include "dcuda/device/state.cuh"

namespace dcuda::device {

// Stops the run with the complaint about a put into a host window.
__device__ __noinline__ inline void report_host_put_fault(const dcuda_state& gst,
                                                          protocol::call call, dcuda_win win,
                                                          int rank, int offset, int size, int tag,
                                                          const protocol::host_put_target& to) {
  using protocol::error_code;
  using protocol::host_put_fault;
  switch (to.fault) {
    case host_put_fault::rank_outside:
      fail(gst.ctx, gst.world_rank, call, error_code::rank_out_of_range, rank, gst.world_size,
           DCUDA_COMM_WORLD);
    case host_put_fault::negative_size:
      fail(gst.ctx, gst.world_rank, call, error_code::negative_size, offset < 0 ? offset : size);
    case host_put_fault::range_outside:
      fail(gst.ctx, gst.world_rank, call, error_code::target_range_outside, offset, size,
           static_cast<std::int64_t>(to.window_size), rank);
    case host_put_fault::tag_outside:
      fail(gst.ctx, gst.world_rank, call, error_code::tag_out_of_range, tag);
    default:
      fail(gst.ctx, gst.world_rank, call, error_code::bad_host_window, win);
  }
}

// Thread 0, before the put's entry barrier: checks a put into host window `win` of world rank
// `rank` and leaves its route in the put route cache (the destination's base and the target
// rank's counter row; or the network, to the target rank), or stops the run. The cache's key is
// cleared: the next put refreshes it again.
__device__ __noinline__ inline void cache_host_window_put(dcuda_state& gst, protocol::call call,
                                                          dcuda_win win, int rank, int offset,
                                                          int size, int tag) {
  const dcuda_context* ctx = gst.ctx;
  const protocol::host_put_target to = protocol::find_host_put_target(
      ctx->host_windows, ctx->host_rank_targets, ctx->process_count, ctx->world_size, win, rank,
      offset, size, protocol::put_call_notifies(call), tag);
  if (to.fault != protocol::host_put_fault::none) {
    report_host_put_fault(gst, call, win, rank, offset, size, tag, to);
  }
  gst.cached_window = DCUDA_WIN_NONE;
  gst.cached_rank = -1;
  gst.put_route_cache.target = rank;
  gst.put_route_cache.path = static_cast<std::uint32_t>(
      to.through_network ? protocol::route::network : protocol::route::host_window);
  gst.put_route_cache.counters = to.counters;
  gst.put_route_cache.ring = nullptr;
  // Through the network the proxy takes the window's slot and the offset; no address here.
  gst.cached_target_base =
      to.through_network ? 0 : to.destination - static_cast<std::uint64_t>(offset);
  gst.cached_target_size = to.window_size;
  gst.cached_own_base = 0;
  gst.cached_own_size = 0;
}

// Thread 0, after the rank has stored a put into a host window (after the block barrier, if every
// thread stored): a system-scope release fence, cumulative over the stores the barrier ordered
// before it, then the count. A stream wait on the target's GPU that sees the count (or a rank's
// wait, after its fence_acquire_sys) sees the bytes: the counting kernel's protocol
// (runtime/stream_operations.cu). A plain put fences too, so that whatever the rank notifies next,
// on any path, follows its bytes.
__device__ inline void finish_host_window_put(std::uint32_t* counters, bool notify, int tag) {
  fence_release_sys();
  if (notify) red_relaxed_sys_increment_u32(counters + tag);
}

// dcuda_win_flush with a handle the rank holds no device window for: a live host window passes
// (its puts within the node were complete on return; the caller waits for those through the
// network); anything else stops the run.
__device__ __noinline__ inline void check_flushed_host_window(const dcuda_state& gst,
                                                              dcuda_win win) {
  const dcuda_context* ctx = gst.ctx;
  if (!protocol::is_host_window_handle(win)) {
    fail(ctx, gst.world_rank, protocol::call::win_flush, protocol::error_code::bad_window, win);
  }
  if (!protocol::host_window_live(ctx->host_windows, win, ctx->process_index, ctx->process_count)) {
    fail(ctx, gst.world_rank, protocol::call::win_flush, protocol::error_code::bad_host_window,
         win);
  }
}

}  // namespace dcuda::device
