// The entry of the thread-scoped calls (dcuda/device/thread_calls.cuh): the check that thread 0
// makes them, and thread 0's whole put. Thread 0 keeps every rank's bookkeeping (consumed counts,
// route caches, tickets), so a call of thread 0 alone races no rank call; the rank calls' entry
// is rank_entry.cuh.
#pragma once

#include "dcuda/detail/device/fail.cuh"
#include "dcuda/detail/device/put_path.cuh"

namespace dcuda::device {

// Stops the run: a thread-scoped call made by a thread other than thread 0. Out of line, so that
// the check is one compare and one branch on the calls' paths.
__device__ __noinline__ inline void report_thread_call_off_thread_zero(const dcuda_state& gst,
                                                                       protocol::call call) {
  fail(gst.ctx, gst.world_rank, call, protocol::error_code::thread_call_off_thread_zero,
       threadIdx.x);
}

// The entry of every thread-scoped call.
__device__ inline void enter_thread_call(const dcuda_state& gst, protocol::call call) {
  if (threadIdx.x != 0) report_thread_call_off_thread_zero(gst, call);
}

// Thread 0's whole put: the checks and the route (plan_put), then the copy and the notification
// (thread_put), with nothing between them; a size thread_put does not take stops the run.
__device__ inline void put_by_thread(dcuda_state& gst, protocol::call call, dcuda_win win, int rank,
                                     int offset, int size, const void* buffer, bool notify,
                                     int tag) {
  enter_thread_call(gst, call);
  if (size > single_thread_put_limit) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::thread_put_too_large, size,
         single_thread_put_limit);
  }
  const held_ticket ticket = plan_put(gst, call, win, rank, offset, size, buffer, notify, tag);
  thread_put(gst, call, win, offset, size, buffer, notify, tag, ticket);
}

}  // namespace dcuda::device
