// Start and end of a rank, communicators, and the barrier of a communicator (thesis listing 3.4
// and dcuda_comm_barrier of listing 3.5). (rank): all threads of the rank call it together.
#pragma once

#include "dcuda/device/handles.cuh"
#include "dcuda/device/state.cuh"
#include "dcuda/detail/device/channel_send.cuh"
#include "dcuda/detail/device/layout_check.cuh"
#include "dcuda/detail/device/rank_entry.cuh"
#include "dcuda/detail/device/delivery_agent.cuh"
#include "dcuda/detail/device/node_barrier.cuh"
#include "dcuda/detail/device/communicators.cuh"
#include "dcuda/detail/device/barriers.cuh"
#include "dcuda/detail/device/heap_blocks.cuh"
#include "dcuda/detail/device/rank_start.cuh"

// (rank), every rank; the first dcuda call of the kernel. Initialises `gst`, which must be in
// shared memory, and returns after every rank of the run has done so (a barrier of
// DCUDA_COMM_WORLD), so no rank communicates before its targets are ready. The block beyond the
// ranks, when there is one, becomes the delivery agent here and never returns. A kernel compiled
// against the headers of another dcuda build stops here, and dcuda_host_run says so.
__device__ inline void dcuda_gpu_init(dcuda_context_handle dcuda, dcuda_state& gst) {
  using namespace dcuda;
  device::check_context_layout(dcuda, protocol::context_layout_stamp);
  // The block after the ranks, when there is one, is the delivery agent.
  if (static_cast<int>(blockIdx.x) >= dcuda->device_ranks) device::serve_as_delivery_agent(dcuda);
  const int world_rank = dcuda->rank_start + static_cast<int>(blockIdx.x);
  if (!__isShared(&gst)) {
    device::fail(dcuda, world_rank, protocol::call::gpu_init,
                 protocol::error_code::not_in_shared_memory,
                 static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(&gst)));
  }
  device::enter_rank_call(dcuda, protocol::call::gpu_init);
  device::start_rank_state(dcuda, gst, world_rank);
  // Across processes this also waits until every GPU has reset its counters for this run.
  device::world_barrier(gst, protocol::call::gpu_init);
}

// (rank), every rank; the last dcuda call. A barrier of DCUDA_COMM_WORLD: nothing is still on
// its way to this GPU when it returns. The watchdog shows the rank as finished afterwards.
__device__ inline void dcuda_gpu_finish(dcuda_state& gst) {
  using namespace dcuda;
  device::enter_rank_call(gst.ctx, protocol::call::gpu_finish);
  device::world_barrier(gst, protocol::call::gpu_finish);
  if (threadIdx.x == 0) {
    device::release_open_allocated_windows(gst);  // no rank reaches them after the barrier
    device::mark_rank_finished(gst);
  }
}

// Any thread: the device copy of the gpu_data given to dcuda_host_run.
__device__ inline void dcuda_get_data(dcuda_state& gst, void** gpu_data) {
  *gpu_data = gst.ctx->user_data;
}

// Any thread: the number of ranks of `comm`.
__device__ inline void dcuda_comm_size(dcuda_state& gst, dcuda_comm comm, int* size) {
  dcuda::device::check_comm(gst, dcuda::protocol::call::comm_size, comm);
  *size = dcuda::device::comm_size(gst, comm);
}

// Any thread: the calling rank's index in `comm`.
__device__ inline void dcuda_comm_rank(dcuda_state& gst, dcuda_comm comm, int* rank) {
  dcuda::device::check_comm(gst, dcuda::protocol::call::comm_rank, comm);
  *rank = comm == DCUDA_COMM_WORLD ? gst.world_rank : gst.device_rank;
}

// (rank), every rank of `comm`. No rank leaves before every rank of `comm` has entered; what any
// rank wrote before it is visible to every rank after it, and across processes every put and
// notification issued before it has landed.
__device__ inline void dcuda_comm_barrier(dcuda_state& gst, dcuda_comm comm) {
  using namespace dcuda;
  device::enter_rank_call(gst.ctx, protocol::call::comm_barrier);
  device::check_comm(gst, protocol::call::comm_barrier, comm);
  if (comm == DCUDA_COMM_WORLD) {
    device::world_barrier(gst, protocol::call::comm_barrier);
  } else {
    device::device_barrier(gst, protocol::call::comm_barrier);
  }
}
