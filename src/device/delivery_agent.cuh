// The delivery agent (protocol/agent_queue.h): one block of the persistent kernel beyond the
// ranks, launched when some rank of this GPU is reached through the network. It runs the host
// proxy's copy jobs in order, between pinned host memory and device memory, and counts the
// notifications that came with them. It is not a rank: dcuda_gpu_init sends it here and it
// leaves the kernel once every rank of the GPU has finished.
#pragma once

#include "device/block_copy.cuh"
#include "device/clock.cuh"
#include "protocol/agent_board.h"
#include "protocol/agent_queue.h"
#include "protocol/device_context.h"

namespace dcuda::device {

inline constexpr std::uint32_t agent_backoff_after_spins = 1u << 16;  // ~0.1 s without a job

// The lanes of warp 0 that the block has (all 32 unless the block is smaller).
__device__ inline unsigned first_warp_mask() {
  return blockDim.x >= 32 ? 0xffffffffu : (1u << blockDim.x) - 1u;
}

// Lanes 0..7 of a warp (of `mask`): one read of job `number`'s slot, lane i loading word i with
// one instruction, which the memory system turns into one read of the slot's line: one PCIe
// round trip. (One thread loading the 8 words itself waits a round trip for each: strong loads of
// host memory do not overlap.) True on every lane when every word carries the job's ticket.
__device__ inline bool read_job_slot(protocol::agent_queue* queue, std::uint32_t number,
                                     unsigned mask, unsigned lane, std::uint64_t& word) {
  bool mine_ready = true;
  if (lane < protocol::agent_job_words) {
    word = protocol::system_atomic<std::uint64_t>(
               queue->jobs[protocol::agent_slot(number)].words[lane])
               .load(cuda::memory_order_relaxed);
    mine_ready = protocol::word_has_stamp(word, protocol::agent_ticket(number));
  }
  return __all_sync(mask, mine_ready);
}

// Warp 0 of an agent without probers: whether job `number` is in its slot; when it is, the job,
// on every lane. A block of fewer than 8 threads reads the words one by one (slowly).
__device__ inline bool agent_job_in_slot(protocol::agent_queue* queue, std::uint32_t number,
                                         protocol::agent_job& job) {
  using protocol::agent_job_words;
  const unsigned mask = first_warp_mask();
  if (blockDim.x < agent_job_words) {
    std::uint32_t found = 0;
    if (threadIdx.x == 0) found = protocol::agent_take_job(*queue, number, job) ? 1u : 0u;
    return __shfl_sync(mask, found, 0) != 0u;  // only lane 0 uses the job afterwards
  }
  std::uint64_t word = 0;
  if (!read_job_slot(queue, number, mask, threadIdx.x, word)) return false;
  std::uint32_t fields[agent_job_words];
  for (unsigned i = 0; i < agent_job_words; ++i) {
    fields[i] = __shfl_sync(mask, protocol::stamped_field(word), static_cast<int>(i));
  }
  job = protocol::agent_job_from_fields(fields);
  protocol::acquire_job_data(job.kind);
  return true;
}

// ---- Probers ----
// A read of host memory takes a PCIe round trip, and one warp's strong reads do not overlap, so
// a job written just after a read left waits for the next read: half a round trip on average,
// on top of the round trip of the read that sees it. Warps 1..probers ("probers") each read the
// slot of the next job, out of step with one another, so some read reaches host memory soon
// after the job does; the prober that sees the job hands it to warp 0 (the executor) through its
// mailbox (protocol/agent_board.h). Warp 0 then only polls the board, in its SM's L1. The rest of
// the block (warp 0 included) runs the copy jobs.

// Who does what in the agent block.
struct agent_roles {
  unsigned probers;     // warps 1..probers probe; 0: warp 0 reads host memory itself
  bool is_prober;       // this thread's warp probes
  unsigned prober;      // which one (when is_prober)
  thread_team copiers;  // warp 0 and the warps after the probers
};

__device__ inline agent_roles agent_roles_of_block() {
  const unsigned warps = blockDim.x / 32;
  // Named barriers count whole warps: probers only in blocks of whole warps.
  const unsigned probers =
      blockDim.x % 32 == 0 && warps >= 2 ? min(protocol::agent_max_probers, warps - 1) : 0u;
  const unsigned warp = threadIdx.x / 32;
  agent_roles roles{};
  roles.probers = probers;
  roles.is_prober = warp >= 1 && warp <= probers;
  roles.prober = warp - 1;
  roles.copiers = {warp == 0 ? threadIdx.x : threadIdx.x - 32 * probers, blockDim.x - 32 * probers};
  return roles;
}

// Barrier of the copiers (the probers never wait in it).
__device__ inline void sync_copiers(const agent_roles& roles) {
  if (roles.probers == 0) {
    __syncthreads();
  } else {
    asm volatile("bar.sync 1, %0;" ::"r"(roles.copiers.size) : "memory");
  }
}

// The agent block's shared memory: what thread 0 hands the copiers at their barrier.
struct agent_shared {
  protocol::agent_job block_job;  // the copy job to run
  std::uint32_t more;             // 0 when the agent ends
};

template <typename T>
using block_atomic = cuda::atomic_ref<T, cuda::thread_scope_block>;

// A prober warp, until warp 0 says stop. After it has handed job n over it waits until warp 0
// wants another (which it says once it has run job n), so a mailbox is never written while warp 0
// reads it.
__device__ inline void probe_for_jobs(const agent_roles& roles, protocol::agent_queue* queue,
                                      protocol::agent_board& board) {
  using protocol::agent_job_words;
  protocol::agent_mailbox& box = board.mailboxes[roles.prober];
  const unsigned lane = threadIdx.x % 32;
  __nanosleep(300 * roles.prober);  // start out of step with the other probers
  std::uint32_t idle = 0;
  while (block_atomic<std::uint32_t>(board.stop).load(cuda::memory_order_relaxed) == 0u) {
    const std::uint32_t number =
        block_atomic<std::uint32_t>(board.wanted).load(cuda::memory_order_relaxed);
    std::uint64_t word = 0;
    if (!read_job_slot(queue, number, 0xffffffffu, lane, word)) {
      if (++idle > agent_backoff_after_spins) __nanosleep(1000);
      continue;
    }
    idle = 0;
    if (lane < agent_job_words) {
      block_atomic<std::uint64_t>(box.words[lane]).store(word, cuda::memory_order_relaxed);
    }
    __syncwarp();  // the words before lane 0's release
    if (lane == 0) {
      // Word 0 is the kind. A copy's data is acquired here, where the job was read; the release
      // below passes it on to warp 0.
      protocol::acquire_job_data(
          static_cast<protocol::agent_job_kind>(protocol::stamped_field(word)));
      block_atomic<std::uint32_t>(box.seen).store(number + 1u, cuda::memory_order_release);
    }
    while (block_atomic<std::uint32_t>(board.wanted).load(cuda::memory_order_relaxed) == number &&
           block_atomic<std::uint32_t>(board.stop).load(cuda::memory_order_relaxed) == 0u) {
    }
  }
}

// Warp 0, lane 0 alone: whether a prober has job `number`; when one has, the job.
__device__ inline bool agent_job_on_board(const agent_roles& roles, protocol::agent_board& board,
                                          std::uint32_t number, protocol::agent_job& job) {
  for (unsigned p = 0; p < roles.probers; ++p) {
    protocol::agent_mailbox& box = board.mailboxes[p];
    if (block_atomic<std::uint32_t>(box.seen).load(cuda::memory_order_acquire) != number + 1u) {
      continue;
    }
    std::uint32_t fields[protocol::agent_job_words];
    for (unsigned i = 0; i < protocol::agent_job_words; ++i) {
      fields[i] = protocol::stamped_field(
          block_atomic<std::uint64_t>(box.words[i]).load(cuda::memory_order_relaxed));
    }
    job = protocol::agent_job_from_fields(fields);
    return true;
  }
  return false;
}

// ---- Warp 0: the executor ----

// Warp 0: waits for job `number` (in lane 0's `job`); false when the ranks have all finished
// instead (nothing more can come: their last world barrier waited for every delivery).
__device__ inline bool wait_for_agent_job(const dcuda_context* ctx, const agent_roles& roles,
                                          protocol::agent_board& board,
                                          protocol::agent_queue* queue, std::uint32_t number,
                                          protocol::agent_job& job) {
  const unsigned mask = first_warp_mask();
  // The exits are checked now and then, by lane 0, so the warp decides as one: every 256 reads
  // of host memory, or every 16384 polls of the board (each check is a read of host memory).
  const std::uint32_t check_every = roles.probers == 0 ? 256u : 16384u;
  const std::uint32_t backoff_after = roles.probers == 0 ? agent_backoff_after_spins : 1u << 24;
  // The probers look for a job only while warp 0 waits for one: during a copy their reads of host
  // memory would only compete with the copy's.
  if (roles.probers != 0 && threadIdx.x == 0) {
    block_atomic<std::uint32_t>(board.wanted).store(number, cuda::memory_order_relaxed);
  }
  for (std::uint32_t spins = 1;; ++spins) {
    if (roles.probers == 0) {
      if (agent_job_in_slot(queue, number, job)) return true;
    } else {
      std::uint32_t found = 0;
      if (threadIdx.x == 0) found = agent_job_on_board(roles, board, number, job) ? 1u : 0u;
      if (__shfl_sync(mask, found, 0) != 0u) return true;
    }
    if (spins % check_every != 0u) continue;
    std::uint32_t all_finished = 0;
    if (threadIdx.x == 0) {
      if (protocol::system_atomic<std::uint32_t>(*ctx->abort_requested)
              .load(cuda::memory_order_relaxed) != 0u) {
        __trap();  // the host watchdog stops the run; it has said why
      }
      all_finished =
          protocol::device_atomic<std::uint32_t>(*ctx->finished_ranks)
              .load(cuda::memory_order_relaxed) == static_cast<std::uint32_t>(ctx->device_ranks);
    }
    if (__shfl_sync(mask, all_finished, 0) != 0u) return false;
    if (spins > backoff_after) __nanosleep(1000);
  }
}

// Thread 0, after the job's data is in place (its own stores, or the copiers' before a barrier):
// the notification, then `done` for the host. Releases: whoever sees the count or `done` sees
// the data (PTX release is cumulative over what the barrier ordered before it). The count is a
// reduction: the agent needs no answer, so it does not wait for one.
__device__ inline void complete_agent_job(protocol::agent_queue* queue, std::uint32_t number,
                                          const protocol::agent_job& job) {
  if (job.counter != 0) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(job.counter) : "memory");
  }
  protocol::agent_finish(*queue, number);
}

// Warp 0: runs the jobs that need no copiers (a count, a payload inside the job) itself (lane 0
// stores), so the latency path has no barrier, until a copy job arrives (true: lane 0 has it in
// `job`) or the ranks have all finished (false).
__device__ inline bool take_block_job(const dcuda_context* ctx, const agent_roles& roles,
                                      protocol::agent_board& board, protocol::agent_queue* queue,
                                      std::uint32_t& number, protocol::agent_job& job) {
  for (;; ++number) {
    if (!wait_for_agent_job(ctx, roles, board, queue, number, job)) return false;
    const std::uint32_t kind =
        __shfl_sync(first_warp_mask(), static_cast<std::uint32_t>(job.kind), 0);
    if (kind == static_cast<std::uint32_t>(protocol::agent_job_kind::copy)) return true;
    if (threadIdx.x == 0) {
      if (job.kind == protocol::agent_job_kind::copy_inline) {
        thread_copy(reinterpret_cast<void*>(job.destination), &job.source,
                    static_cast<int>(job.bytes));
      }
      complete_agent_job(queue, number, job);
    }
  }
}

// Called by every thread of the agent block; never returns to the user's kernel.
__device__ inline void serve_as_delivery_agent(const dcuda_context* ctx) {
  __shared__ agent_shared shared;
  protocol::agent_board& board = *ctx->agent_board;  // zeroed by the host before the launch
  const agent_roles roles = agent_roles_of_block();
  protocol::agent_queue* queue = ctx->agent_queue;
  if (roles.is_prober) {
    probe_for_jobs(roles, queue, board);
    asm volatile("exit;");
  }
  std::uint32_t number = 0;  // warp 0's: the next job
  for (;;) {
    if (threadIdx.x < 32) {
      protocol::agent_job job{};
      const bool copy = take_block_job(ctx, roles, board, queue, number, job);
      if (threadIdx.x == 0) {
        shared.block_job = job;
        shared.more = copy ? 1u : 0u;
        if (!copy) block_atomic<std::uint32_t>(board.stop).store(1u, cuda::memory_order_relaxed);
      }
    }
    sync_copiers(roles);
    if (shared.more == 0u) break;
    team_copy(roles.copiers, reinterpret_cast<void*>(shared.block_job.destination),
              reinterpret_cast<const void*>(shared.block_job.source), shared.block_job.bytes);
    sync_copiers(roles);
    if (threadIdx.x == 0) complete_agent_job(queue, number, shared.block_job);
    ++number;
  }
  asm volatile("exit;");  // leave the kernel: the user's code after dcuda_gpu_init is for ranks
}

}  // namespace dcuda::device
