// dcuda_test_notifications / dcuda_wait_notifications (thesis listing 4.2): thread 0 polls the
// arrival counter (ranks of this GPU, the network) and the heads of the rank's rings (other GPUs
// of the node: detail/device/ring_poll.cuh), then acquires; the block barrier hands the result (and
// the data's visibility) to the rank.
#pragma once

#include "dcuda/device/rank.cuh"
#include "dcuda/device/state.cuh"
#include "dcuda/detail/device/call_linkage.cuh"
#include "dcuda/detail/device/code_generation.cuh"
#include "dcuda/detail/device/notification_wait.cuh"
#include "dcuda/detail/device/rank_entry.cuh"

// (rank). Returns 1, in every thread, when at least `count` unconsumed notifications of `tag`
// have arrived, after consuming `count` of them (their data then visible to every thread of the
// rank); 0, consuming nothing, otherwise.
__device__ inline int dcuda_test_notifications(dcuda_state& gst, int tag, int count) {
  using namespace dcuda;
  device::opaque_arguments(tag, count);
  device::enter_rank_call(gst.ctx, protocol::call::test_notifications);
  device::check_notification_args(gst, protocol::call::test_notifications, tag, count);
  if (threadIdx.x == 0) {
    const bool ready =
        device::take_arrived_notifications(gst, tag, static_cast<std::uint32_t>(count));
    gst.broadcast = ready ? 1 : 0;
  }
  __syncthreads();
  return gst.broadcast;
}

// (rank). Waits until at least `count` unconsumed notifications of `tag` have arrived, then
// consumes `count` of them; their data is visible to every thread of the rank on return.
__device__ DCUDA_CALL_LINKAGE void dcuda_wait_notifications(dcuda_state& gst, int tag, int count) {
  using namespace dcuda;
  device::opaque_arguments(tag, count);
  device::enter_rank_call(gst.ctx, protocol::call::wait_notifications);
  device::check_notification_args(gst, protocol::call::wait_notifications, tag, count);
  if (threadIdx.x == 0) {
    device::wait_for_notifications(gst, protocol::call::wait_notifications, tag,
                                   static_cast<std::uint32_t>(count));
  }
  __syncthreads();
}
