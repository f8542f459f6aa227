// The barriers of the communicators: of this GPU's ranks (a counter in device memory), and of
// DCUDA_COMM_WORLD, which meets on the GPUs within a node (detail/device/node_barrier.cuh) or as a
// world collective through the host proxies (protocol/world_collective.h), the collective that
// dcuda_win_create and dcuda_win_free of DCUDA_COMM_WORLD make too.
#pragma once

#include "dcuda/detail/device/channel_send.cuh"
#include "dcuda/detail/device/node_barrier.cuh"
#include "dcuda/detail/device/ring_poll.cuh"
#include "dcuda/detail/device/spin_wait.cuh"
#include "dcuda/detail/protocol/barrier.h"

namespace dcuda::device {

// Barrier of all ranks of this GPU; called after enter_rank_call.
__device__ inline void device_barrier(dcuda_state& gst, protocol::call call) {
  if (threadIdx.x == 0) {
    const dcuda_context* ctx = gst.ctx;
    const std::uint32_t episode = ++gst.barrier_episode;
    const auto participants = static_cast<std::uint32_t>(gst.device_ranks);
    std::uint32_t* arrivals = ctx->barrier_arrivals;
    // Release: the block's writes (ordered before thread 0 by the entry barrier) are visible to
    // every rank that observes the arrival.
    protocol::device_atomic<std::uint32_t>(*arrivals).fetch_add(1u, cuda::memory_order_release);
    const std::uint32_t target = protocol::barrier_target(episode, participants);
    spin_until(gst,
               wait_description{call, protocol::wait_kind::barrier,
                                static_cast<std::int32_t>(episode), participants},
               [&](std::uint32_t& arrived) {
                 const std::uint32_t now = protocol::device_atomic<std::uint32_t>(*arrivals).load(
                     cuda::memory_order_relaxed);
                 arrived = participants - protocol::barrier_missing(now, episode, participants);
                 return protocol::reached(now, target);
               });
    // Acquire, once (the poll is relaxed): what every rank wrote before it arrived, window
    // entries included, is visible to this thread and, through the block barrier, to the rank.
    protocol::device_atomic<std::uint32_t>(*arrivals).load(cuda::memory_order_acquire);
  }
  __syncthreads();
}

// Whether a world collective's leaders meet on the GPUs (protocol/node_barrier.h): every process
// of the job on this node and reached by the peer path, except in dcuda_gpu_init, which goes
// through the hosts (it is what tells each process that the others have zeroed their boards and
// rings for this run).
__device__ inline bool meets_on_gpus(const dcuda_state& gst, protocol::call call) {
  return gst.node_barrier != 0u && call != protocol::call::gpu_init;
}

// A collective over DCUDA_COMM_WORLD across processes (protocol/world_collective.h): the ranks
// of this GPU meet, rank 0 hands the collective to the host proxy and waits for every other
// process, then the ranks meet again. Called by every thread of every rank, after
// enter_rank_call.
__device__ inline void world_collective(dcuda_state& gst, protocol::call call,
                                        std::uint32_t windows_in_use, int slot) {
  device_barrier(gst, call);
  if (gst.device_rank == 0 && threadIdx.x == 0) {
    const std::uint32_t sequence = ++gst.world_collectives;
    // Where barriers meet on the GPUs, the other leaders learn of this collective too: one that
    // waits in a barrier with this sequence finds the call differs and says so.
    if (meets_on_gpus(gst, call)) post_board_word(gst, sequence, call);
    protocol::world_collective_request request{};
    request.call = static_cast<std::uint32_t>(call);
    request.windows_in_use = windows_in_use;
    request.slot = slot;
    for (int i = 0; i < protocol::max_windows; ++i) request.generation[i] = gst.generation[i];
    send_message(gst, gst.commands, protocol::message_type::world_collective,
                 static_cast<std::int32_t>(sequence), &request, sizeof request, call);
    std::uint32_t& completed = gst.ctx->collective_result->completed;
    spin_until(
        gst,
        wait_description{call, protocol::wait_kind::world_collective,
                         static_cast<std::int32_t>(sequence), sequence},
        [&](std::uint32_t& done) {
          done = protocol::system_atomic<std::uint32_t>(completed).load(cuda::memory_order_relaxed);
          return protocol::reached(done, sequence);
        });
    // Acquire: what the proxy wrote before it (window entries, results) is visible, and through
    // the barrier below to every rank.
    protocol::system_atomic<std::uint32_t>(completed).load(cuda::memory_order_acquire);
  }
  device_barrier(gst, call);
}

// The barrier of DCUDA_COMM_WORLD within a node whose processes all reach each other by the peer
// path (protocol/node_barrier.h): the ranks of this GPU meet, rank 0 meets the other GPUs'
// leaders through their boards, then the ranks meet again and take the ring records sent to them
// before the barrier. Called by every thread of every rank, after enter_rank_call. Inline: out
// of line (to lower the spills of 1024-thread ranks, which plan_put has lowered since),
// the call made every device barrier 0.4 us slower (one H200: 1.49 against 1.09 us;
// bench/results/h200/experiments/device-barrier-regression/); every kernel contains it, through
// dcuda_gpu_init and dcuda_gpu_finish. Thread 0's board work stays out of line
// (detail/device/node_barrier.cuh).
__device__ inline void node_world_barrier(dcuda_state& gst, protocol::call call) {
  device_barrier(gst, call);
  if (gst.device_rank == 0 && threadIdx.x == 0) {
    const std::uint32_t sequence = ++gst.world_collectives;
    post_board_word(gst, sequence, call);
    wait_for_board(gst, sequence, call);
  }
  device_barrier(gst, call);
  settle_rings(gst);
}

// The barrier of DCUDA_COMM_WORLD: this GPU's ranks alone when there is one process; on the GPUs
// where meets_on_gpus; otherwise through the host proxies.
// After it, every rank has acquired what every other wrote before it (plain puts, counted
// notifications' data), so no target is owed an acquire any more (peer_acquire_owed).
__device__ inline void world_barrier(dcuda_state& gst, protocol::call call) {
  if (gst.process_count == 1) {
    device_barrier(gst, call);
  } else if (meets_on_gpus(gst, call)) {
    node_world_barrier(gst, call);
  } else {
    world_collective(gst, call, 0, -1);
    settle_rings(gst);
  }
  if (threadIdx.x == 0) gst.peer_acquire_owed = 0;
}

}  // namespace dcuda::device
