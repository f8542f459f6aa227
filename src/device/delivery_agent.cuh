// The delivery agent (protocol/agent_queue.h): one block of the persistent kernel beyond the
// ranks, launched when some rank of this GPU is reached through the network. It runs the host
// proxy's copy jobs in order, between pinned host memory and device memory, and counts the
// notifications that came with them. It is not a rank: dcuda_gpu_init sends it here and it
// leaves the kernel once every rank of the GPU has finished.
#pragma once

#include "device/block_copy.cuh"
#include "device/clock.cuh"
#include "protocol/agent_queue.h"
#include "protocol/device_context.h"

namespace dcuda::device {

inline constexpr std::uint32_t agent_backoff_after_spins = 1u << 16;  // ~0.1 s without a job

// Thread 0: waits for job `next` and copies it into `job`; false when the ranks have all
// finished instead (nothing more can come: their last world barrier waited for every delivery).
__device__ inline bool wait_for_agent_job(const dcuda_context* ctx, protocol::agent_queue* queue,
                                          std::uint32_t next, protocol::agent_job& job) {
  for (std::uint32_t spins = 0;; ++spins) {
    if (protocol::agent_job_ready(*queue, next)) {
      // The whole job in four independent 16-byte loads: one round trip over PCIe, not one per
      // field (after the acquire, plain loads see what the proxy wrote before the ticket).
      const auto* from = reinterpret_cast<const uint4*>(&queue->jobs[protocol::agent_slot(next)]);
      auto* to = reinterpret_cast<uint4*>(&job);
      const uint4 a = from[0], b = from[1], c = from[2], d = from[3];
      to[0] = a;
      to[1] = b;
      to[2] = c;
      to[3] = d;
      return true;
    }
    // The exits are checked now and then: each check is another read, and a job should be seen
    // within one read of host memory.
    if ((spins & 255u) != 255u) continue;
    if (protocol::device_atomic<std::uint32_t>(*ctx->finished_ranks)
            .load(cuda::memory_order_relaxed) == static_cast<std::uint32_t>(ctx->device_ranks)) {
      return false;
    }
    if (protocol::system_atomic<std::uint32_t>(*ctx->abort_requested)
            .load(cuda::memory_order_relaxed) != 0u) {
      __trap();  // the host watchdog stops the run; it has said why
    }
    if (spins > agent_backoff_after_spins) __nanosleep(1000);
  }
}

// Called by every thread of the agent block; never returns to the user's kernel.
__device__ inline void serve_as_delivery_agent(const dcuda_context* ctx) {
  __shared__ protocol::agent_job job;
  __shared__ std::uint32_t more;
  protocol::agent_queue* queue = ctx->agent_queue;
  for (std::uint32_t next = 0;; ++next) {
    if (threadIdx.x == 0) more = wait_for_agent_job(ctx, queue, next, job) ? 1u : 0u;
    __syncthreads();
    if (more == 0u) break;
    const auto kind = static_cast<protocol::agent_job_kind>(job.kind);
    if (kind != protocol::agent_job_kind::count_only) {
      const void* source = kind == protocol::agent_job_kind::copy_inline
                               ? static_cast<const void*>(job.payload)
                               : reinterpret_cast<const void*>(job.source);
      block_copy(reinterpret_cast<void*>(job.destination), source, job.bytes);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      // Release: the block's copy (ordered before thread 0 by the barrier) is visible to the
      // rank that sees the count, and to the host that sees `done` (pinned staging).
      if (job.counter != 0) {
        protocol::device_atomic<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(job.counter))
            .fetch_add(1u, cuda::memory_order_release);
      }
      protocol::agent_finish(*queue, next);
    }
  }
  asm volatile("exit;");  // leave the kernel: the user's code after dcuda_gpu_init is for ranks
}

}  // namespace dcuda::device
