// Thread-scoped calls (extension): the notified access of small messages and the waits, made by
// thread 0 of a rank alone, with no block barrier of their own. As NVSHMEM's thread-level calls
// beside its _block ones: a kernel that already synchronises its block around communication
// (its own __syncthreads) pays for no second barrier inside dcuda.
//
// Why thread 0 only: a rank's notification counts, route caches and tickets are thread 0's
// (every rank call does that bookkeeping in thread 0), so a thread call needs no lock and cannot
// race a rank call of the same rank. Another thread gets an error naming it.
//
// Ordering, as for the rank calls (the same code after their entry barrier): a notification never
// overtakes the data of the rank's earlier puts to the same target. A thread put reads its source
// when called, so bytes other threads wrote there must come before a block barrier thread 0
// passed (where a rank call has its entry barrier). After a wait or a successful test the
// notified data is visible to thread 0, and to the rank's other threads after a block barrier.
// Thread calls and rank calls mix in any order; per-target order and dcuda_win_flush cover both.
#pragma once

#include "dcuda/device/handles.cuh"
#include "dcuda/device/state.cuh"
#include "dcuda/detail/device/notification_wait.cuh"
#include "dcuda/detail/device/notify_path.cuh"
#include "dcuda/detail/device/thread_entry.cuh"

// The largest message a thread-scoped put moves (bytes): what one thread copies as fast as the
// block would, and what the peer path's ring and the network's command entries carry.
#define DCUDA_THREAD_PUT_LIMIT 16
static_assert(DCUDA_THREAD_PUT_LIMIT == dcuda::device::single_thread_put_limit);

// (thread 0). dcuda_put of at most DCUDA_THREAD_PUT_LIMIT bytes by thread 0 alone. Complete on
// return: the data is at the target (through the network: on its way, in issue order), and
// `buffer` may be reused.
__device__ inline void dcuda_put_thread(dcuda_state& gst, dcuda_win win, int rank, int offset,
                                        int size, void* buffer) {
  dcuda::device::put_by_thread(gst, dcuda::protocol::call::put_thread, win, rank, offset, size,
                               buffer, false, 0);
}

// (thread 0). dcuda_put_notify of at most DCUDA_THREAD_PUT_LIMIT bytes by thread 0 alone: the
// notification with `tag` never overtakes the data.
__device__ inline void dcuda_put_notify_thread(dcuda_state& gst, dcuda_win win, int rank,
                                               int offset, int size, void* buffer, int tag) {
  dcuda::device::put_by_thread(gst, dcuda::protocol::call::put_notify_thread, win, rank, offset,
                               size, buffer, true, tag);
}

// (thread 0). dcuda_notify by thread 0 alone.
__device__ inline void dcuda_notify_thread(dcuda_state& gst, int rank, dcuda_comm comm, int tag) {
  using namespace dcuda;
  constexpr protocol::call call = protocol::call::notify_thread;
  device::enter_thread_call(gst, call);
  const device::held_ticket early = device::plan_notify(gst, call, rank, comm, tag);
  device::notify_planned(gst, call, tag, early);
}

// (thread 0). dcuda_test_notifications for thread 0 alone: 1 when at least `count` unconsumed
// notifications of `tag` have arrived, after consuming `count` of them (their data then visible
// to thread 0); 0, consuming nothing, otherwise.
__device__ inline int dcuda_test_notifications_thread(dcuda_state& gst, int tag, int count) {
  using namespace dcuda;
  constexpr protocol::call call = protocol::call::test_notifications_thread;
  device::enter_thread_call(gst, call);
  device::check_notification_args(gst, call, tag, count);
  return device::take_arrived_notifications(gst, tag, static_cast<std::uint32_t>(count)) ? 1 : 0;
}

// (thread 0). dcuda_wait_notifications for thread 0 alone: returns once `count` unconsumed
// notifications of `tag` have arrived and are consumed; their data is visible to thread 0. The
// watchdog names the wait as it names a rank's.
__device__ inline void dcuda_wait_notifications_thread(dcuda_state& gst, int tag, int count) {
  using namespace dcuda;
  constexpr protocol::call call = protocol::call::wait_notifications_thread;
  device::enter_thread_call(gst, call);
  device::check_notification_args(gst, call, tag, count);
  device::wait_for_notifications(gst, call, tag, static_cast<std::uint32_t>(count));
}
