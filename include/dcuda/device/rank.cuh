// Start and end of a rank, communicators, and the barrier over DCUDA_COMM_DEVICE (thesis
// listing 3.4 and dcuda_comm_barrier of listing 3.5).
#pragma once

#include "dcuda/detail/device/channel_send.cuh"
#include "dcuda/detail/device/collective.cuh"
#include "dcuda/detail/device/delivery_agent.cuh"
#include "dcuda/detail/device/node_barrier.cuh"
#include "dcuda/detail/device/ring_poll.cuh"
#include "dcuda/detail/device/spin_wait.cuh"
#include "dcuda/detail/protocol/barrier.h"

using dcuda_context_handle = dcuda_context*;
using dcuda_comm = int;
#define DCUDA_COMM_WORLD 0
#define DCUDA_COMM_DEVICE 1

namespace dcuda::device {

__device__ inline bool valid_comm(dcuda_comm comm) {
  return comm == DCUDA_COMM_WORLD || comm == DCUDA_COMM_DEVICE;
}

__device__ inline void check_comm(const dcuda_state& gst, protocol::call call, dcuda_comm comm) {
  if (!valid_comm(comm)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::bad_communicator, comm);
  }
}

__device__ inline int comm_size(const dcuda_state& gst, dcuda_comm comm) {
  return comm == DCUDA_COMM_WORLD ? gst.world_size : gst.device_ranks;
}

// Rank index within `comm` -> world rank.
__device__ inline int world_rank_of(const dcuda_state& gst, dcuda_comm comm, int rank) {
  return comm == DCUDA_COMM_WORLD ? rank : rank + gst.rank_start;
}

// Whether a world rank runs on this GPU.
__device__ inline bool on_this_device(const dcuda_state& gst, int world_rank) {
  return static_cast<unsigned>(world_rank - gst.rank_start) <
         static_cast<unsigned>(gst.device_ranks);
}

__device__ inline void check_rank(const dcuda_state& gst, protocol::call call, dcuda_comm comm,
                                  int rank) {
  const int size = comm_size(gst, comm);
  if (rank < 0 || rank >= size) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::rank_out_of_range, rank, size, comm);
  }
}

__device__ inline void check_tag(const dcuda_state& gst, protocol::call call, int tag) {
  if (tag < 0 || tag >= protocol::tag_count) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::tag_out_of_range, tag);
  }
}

// Barrier of all ranks of this GPU; called after enter_collective.
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
// enter_collective.
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
// before the barrier. Called by every thread of every rank, after enter_collective. Inline: out
// of line (5c07554, to lower the spills of 1024-thread ranks, which plan_put has lowered since),
// the call made every device barrier 0.4 us slower (one H200: 1.49 against 1.09 us;
// bench/results/h200/experiments/device-barrier-regression/); every kernel contains it, through
// dcuda_gpu_init and dcuda_gpu_finish. Thread 0's board work stays out of line (node_barrier.cuh).
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
__device__ inline void world_barrier(dcuda_state& gst, protocol::call call) {
  if (gst.process_count == 1) {
    device_barrier(gst, call);
  } else if (meets_on_gpus(gst, call)) {
    node_world_barrier(gst, call);
  } else {
    world_collective(gst, call, 0, -1);
    settle_rings(gst);
  }
}

}  // namespace dcuda::device

__device__ inline void dcuda_gpu_init(dcuda_context_handle dcuda, dcuda_state& gst) {
  using namespace dcuda;
  // The block after the ranks, when there is one, is the delivery agent.
  if (static_cast<int>(blockIdx.x) >= dcuda->device_ranks) device::serve_as_delivery_agent(dcuda);
  const int world_rank = dcuda->rank_start + static_cast<int>(blockIdx.x);
  if (!__isShared(&gst)) {
    device::fail(dcuda, world_rank, protocol::call::gpu_init,
                 protocol::error_code::not_in_shared_memory,
                 static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(&gst)));
  }
  device::enter_collective(dcuda, protocol::call::gpu_init);
  if (threadIdx.x == 0) {
    gst.ctx = dcuda;
    gst.notifications = dcuda->device_notifications;
    gst.windows = dcuda->windows;
    gst.rank_routes = dcuda->rank_routes;
    gst.commands = dcuda->commands;
    gst.uses_network = dcuda->uses_network;
    gst.node_barrier = dcuda->node_barrier;
    gst.device_rank = static_cast<std::int32_t>(blockIdx.x);
    gst.world_rank = world_rank;
    gst.rank_start = dcuda->rank_start;
    gst.world_size = dcuda->world_size;
    gst.device_ranks = dcuda->device_ranks;
    gst.process_count = dcuda->process_count;
    gst.barrier_episode = 0;
    gst.windows_in_use = 0;
    gst.world_windows = 0;
    gst.cached_window = -1;
    gst.put_route_cache.target = -1;
    gst.notify_route_cache.target = -1;
    gst.acks_requested = 0;
    gst.acks_awaited = 0;
    gst.world_collectives = 0;
    gst.waits_published = 0;
    gst.record_writes = 0;
    gst.broadcast = 0;
    gst.ring_peers = dcuda->ring_peers;
    gst.peer_fence_owed = 0;
    if (dcuda->ring_peers != 0u) {
      const protocol::ring_memory_layout layout{static_cast<std::uint32_t>(dcuda->device_ranks),
                                                dcuda->ring_peers, dcuda->ring_slots};
      gst.rings = dcuda->ring_memory + layout.ring(blockIdx.x, 0);
      gst.ring_tails = reinterpret_cast<std::uint32_t*>(dcuda->ring_memory + layout.tails());
      gst.ring_taken_here =
          reinterpret_cast<const std::uint32_t*>(dcuda->ring_memory + layout.taken());
      for (std::uint32_t peer = 0; peer < dcuda->ring_peers; ++peer) {
        gst.ring_taken[peer] = dcuda->ring_taken[peer] + blockIdx.x;
      }
    }
  }
  for (int i = static_cast<int>(threadIdx.x); i < protocol::tag_count; i += blockDim.x) {
    gst.consumed[i] = 0;
    gst.counter_acquired[i] = 0;
  }
  for (int i = static_cast<int>(threadIdx.x); i < static_cast<int>(protocol::max_peer_gpus);
       i += blockDim.x) {
    gst.ring_head[i] = 0;
  }
  for (int i = static_cast<int>(threadIdx.x); i < protocol::max_windows; i += blockDim.x) {
    gst.generation[i] = 0;
  }
  __syncthreads();
  // Across processes this also waits until every GPU has reset its counters for this run.
  device::world_barrier(gst, protocol::call::gpu_init);
}

__device__ inline void dcuda_gpu_finish(dcuda_state& gst) {
  using namespace dcuda;
  device::enter_collective(gst.ctx, protocol::call::gpu_finish);
  // Across processes: nothing is still on its way to this GPU when its kernel ends.
  device::world_barrier(gst, protocol::call::gpu_finish);
  if (threadIdx.x == 0) {
    protocol::device_atomic<std::uint32_t>(*gst.ctx->finished_ranks)
        .fetch_add(1u, cuda::memory_order_relaxed);
    device::write_wait_record(
        gst,
        device::wait_description{protocol::call::gpu_finish, protocol::wait_kind::finished, 0, 0},
        0, gst.waits_published);
  }
}

__device__ inline void dcuda_get_data(dcuda_state& gst, void** gpu_data) {
  *gpu_data = gst.ctx->user_data;
}

__device__ inline void dcuda_comm_size(dcuda_state& gst, dcuda_comm comm, int* size) {
  dcuda::device::check_comm(gst, dcuda::protocol::call::comm_size, comm);
  *size = dcuda::device::comm_size(gst, comm);
}

__device__ inline void dcuda_comm_rank(dcuda_state& gst, dcuda_comm comm, int* rank) {
  dcuda::device::check_comm(gst, dcuda::protocol::call::comm_rank, comm);
  *rank = comm == DCUDA_COMM_WORLD ? gst.world_rank : gst.device_rank;
}

__device__ inline void dcuda_comm_barrier(dcuda_state& gst, dcuda_comm comm) {
  using namespace dcuda;
  device::enter_collective(gst.ctx, protocol::call::comm_barrier);
  device::check_comm(gst, protocol::call::comm_barrier, comm);
  if (comm == DCUDA_COMM_WORLD) {
    device::world_barrier(gst, protocol::call::comm_barrier);
  } else {
    device::device_barrier(gst, protocol::call::comm_barrier);
  }
}
