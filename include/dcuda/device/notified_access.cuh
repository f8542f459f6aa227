// dcuda_put, dcuda_put_notify, dcuda_notify, dcuda_win_flush (thesis listing 3.5, section 4.5).
// On its own GPU, and on a peer GPU of the node, the rank does everything itself: its threads
// copy into the target's window, then thread 0 notifies: on its GPU by a release atomic on the
// target's counter, on another GPU of the node by a record in the target's ring
// (detail/device/peer_ring.cuh), after a system-scope fence, so the data is visible before the
// notification. A put_notify of at most 4 bytes to another GPU carries its payload in the record
// and needs no fence. Those operations are complete when they return, which gives issue-order
// delivery to every target. A target reached through the network gets the operation through the
// host proxies (detail/device/remote_send.cuh), which deliver in issue order too; dcuda_win_flush
// waits until the proxy has copied out the rank's large payloads.
//
// Extension: `win` may also be a host window (dcuda/host_stream.h), created before the run; `rank`
// is then a world rank, the buffer is that rank's process's, and the notification is counted
// where that process's stream waits, and the rank's own waits, find it
// (detail/device/host_window_put.cuh, from the put path's route refresh).
#pragma once

#include "dcuda/device/handles.cuh"
#include "dcuda/device/state.cuh"
#include "dcuda/device/window.cuh"
#include "dcuda/detail/device/call_linkage.cuh"
#include "dcuda/detail/device/code_generation.cuh"
#include "dcuda/detail/device/notify_path.cuh"
#include "dcuda/detail/device/put_path.cuh"
#include "dcuda/detail/device/rank_entry.cuh"
#include "dcuda/detail/device/remote_send.cuh"
#include "dcuda/detail/device/tickets.cuh"

// (rank). Copies `size` bytes from `buffer`, inside the caller's own window `win`, to `offset` in
// the window of rank `rank` (numbered in the window's communicator). Complete on return: the data
// is at the target (through the network: on its way, in issue order), and `buffer` may be reused,
// except for a large put through the network, whose buffer dcuda_win_flush releases.
__device__ DCUDA_CALL_LINKAGE void dcuda_put(dcuda_state& gst, dcuda_win win, int rank, int offset,
                                             int size, void* buffer) {
  using namespace dcuda;
  device::opaque_arguments(win, rank, offset, size);
  device::held_ticket ticket{};
  if (threadIdx.x == 0) {
    ticket = device::plan_put(gst, protocol::call::put, win, rank, offset, size, buffer, false, 0);
  }
  device::enter_rank_call(gst.ctx, protocol::call::put);
  device::put_along(gst, protocol::call::put, win, offset, size, buffer, false, 0, ticket);
}

// (rank). dcuda_put, then one notification with `tag` at the target, which never overtakes the
// data: a rank that has consumed it sees the data, and everything the caller wrote before.
__device__ DCUDA_CALL_LINKAGE void dcuda_put_notify(dcuda_state& gst, dcuda_win win, int rank,
                                                    int offset, int size, void* buffer, int tag) {
  using namespace dcuda;
  device::opaque_arguments(win, rank, offset, size, tag);
  device::held_ticket ticket{};
  if (threadIdx.x == 0) {
    ticket = device::plan_put(gst, protocol::call::put_notify, win, rank, offset, size, buffer,
                              true, tag);
  }
  device::enter_rank_call(gst.ctx, protocol::call::put_notify);
  device::put_along(gst, protocol::call::put_notify, win, offset, size, buffer, true, tag, ticket);
}

// (rank). One notification with `tag` at rank `rank` of `comm`, after everything the caller
// wrote before (in issue order with its puts to the same target).
__device__ inline void dcuda_notify(dcuda_state& gst, int rank, dcuda_comm comm, int tag) {
  using namespace dcuda;
  device::opaque_arguments(rank, tag);
  device::held_ticket early{};
  if (threadIdx.x == 0) early = device::plan_notify(gst, protocol::call::notify, rank, comm, tag);
  device::enter_rank_call(gst.ctx, protocol::call::notify);
  if (threadIdx.x != 0) return;  // a notify is thread 0's work alone
  device::notify_planned(gst, protocol::call::notify, tag, early);
}

// (rank). Returns when the buffers of the caller's earlier puts may be reused (only
// large puts through the network keep theirs until the host proxy has copied them out).
__device__ DCUDA_CALL_LINKAGE void dcuda_win_flush(dcuda_state& gst, dcuda_win win) {
  using namespace dcuda;
  device::enter_rank_call(gst.ctx, protocol::call::win_flush);
  if (!device::holds_window(gst, win)) device::check_flushed_host_window(gst, win);
  // A large put through the network, into a device window or a host window, leaves its source
  // in place until the proxy has copied it out.
  if (gst.uses_network) device::wait_for_staged_puts(gst, protocol::call::win_flush);
}
