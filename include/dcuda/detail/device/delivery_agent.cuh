// The delivery agent (protocol/delivery_queue.h): one block of the persistent kernel beyond the
// ranks, launched when some rank of this GPU is reached through the network. It runs the host
// proxy's copy jobs in order, between pinned host memory and device memory, and counts the
// notifications that came with them. It is not a rank: dcuda_gpu_init sends it here and it
// leaves the kernel once every rank of the GPU has finished.
#pragma once

#include "dcuda/detail/device/block_copy.cuh"
#include "dcuda/detail/device/memory_order.cuh"
#include "dcuda/detail/device/clock.cuh"
#include "dcuda/detail/device/ptx_instructions.cuh"
#include "dcuda/detail/device/typed_copy.cuh"
#include "dcuda/detail/protocol/delivery_queue.h"
#include "dcuda/detail/protocol/typed_piece.h"
#include "dcuda/detail/protocol/device_context.h"

namespace dcuda::device {

inline constexpr std::uint32_t agent_backoff_after_spins = 1u << 16;  // ~0.1 s without a job

// The lanes of warp 0 that the block has (all 32 unless the block is smaller).
__device__ inline unsigned first_warp_mask() {
  return blockDim.x >= 32 ? 0xffffffffu : (1u << blockDim.x) - 1u;
}

// Warp 0: whether job `number` is in its slot; when it is, the job, on every lane. Lanes 0..7
// each load one word with one instruction, which the memory system turns into one read of the
// slot's line: one PCIe round trip. (One thread loading the 8 words itself waits a round trip
// for each: strong loads of host memory do not overlap.) A block of fewer than 8 threads takes
// that slow path.
__device__ inline bool delivery_job_in_slot(protocol::delivery_queue* queue, std::uint32_t number,
                                            protocol::delivery_job& job) {
  using protocol::delivery_job_words;
  const unsigned mask = first_warp_mask();
  const unsigned lane = threadIdx.x;
  if (blockDim.x < delivery_job_words) {
    std::uint32_t found = 0;
    if (lane == 0) found = protocol::delivery_take_job(*queue, number, job) ? 1u : 0u;
    return __shfl_sync(mask, found, 0) != 0u;  // only lane 0 uses the job afterwards
  }
  std::uint64_t word = 0;
  bool mine_ready = true;
  if (lane < delivery_job_words) {
    word = protocol::system_atomic<std::uint64_t>(
               queue->jobs[protocol::delivery_slot(number)].words[lane])
               .load(cuda::memory_order_relaxed);
    mine_ready = protocol::word_has_stamp(word, protocol::delivery_ticket(number));
  }
  if (!__all_sync(mask, mine_ready)) return false;
  std::uint32_t fields[delivery_job_words];
  for (unsigned i = 0; i < delivery_job_words; ++i) {
    fields[i] = __shfl_sync(mask, protocol::stamped_field(word), static_cast<int>(i));
  }
  job = protocol::delivery_job_from_fields(fields);
  protocol::acquire_job_data(job.kind);
  return true;
}

// Warp 0: waits for job `number`; false when the ranks have all finished instead (nothing more
// can come: their last world barrier waited for every delivery).
__device__ inline bool wait_for_delivery_job(const dcuda_context* ctx,
                                             protocol::delivery_queue* queue, std::uint32_t number,
                                             protocol::delivery_job& job) {
  const unsigned mask = first_warp_mask();
  for (std::uint32_t spins = 0;; ++spins) {
    if (delivery_job_in_slot(queue, number, job)) return true;
    // The exits are checked now and then (each check is another read; a job should be seen
    // within one read of host memory), by lane 0, so the warp decides as one.
    if ((spins & 255u) != 255u) continue;
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
    if (spins > agent_backoff_after_spins) __nanosleep(1000);
  }
}

// Thread 0, after the job's data is in place (its own stores, or the block's before a barrier):
// the notification, then `done` for the host. Releases: whoever sees the count or `done` sees
// the data (PTX release is cumulative over what the barrier ordered before it), at the scope the
// job asks for (protocol::job_count). The count is a reduction: the agent needs no answer, so it
// does not wait for one.
__device__ inline void complete_delivery_job(protocol::delivery_queue* queue, std::uint32_t number,
                                             const protocol::delivery_job& job) {
  const protocol::job_count count = protocol::decode_job_count(job.counter);
  if (count.system_scope) {
    fence_release_sys();
    red_relaxed_sys_increment_u32(count.counter);
  } else if (count.counter != nullptr) {
    red_release_gpu_increment_u32(count.counter);
  }
  protocol::delivery_finish(*queue, number);
}

// Warp 0: runs the jobs that need no block (a count, a payload inside the job) itself (lane 0
// stores), so the latency path has no block barrier, until a job for the whole block arrives
// (true: lane 0 has it in `job`) or the ranks have all finished (false).
__device__ inline bool take_block_job(const dcuda_context* ctx, protocol::delivery_queue* queue,
                                      std::uint32_t& number, protocol::delivery_job& job) {
  for (;; ++number) {
    if (!wait_for_delivery_job(ctx, queue, number, job)) return false;
    const std::uint32_t kind =
        __shfl_sync(first_warp_mask(), static_cast<std::uint32_t>(job.kind), 0);
    if (protocol::job_for_whole_block(static_cast<protocol::delivery_job_kind>(kind))) return true;
    if (threadIdx.x == 0) {
      if (job.kind == protocol::delivery_job_kind::copy_inline) {
        thread_copy(reinterpret_cast<void*>(job.destination), &job.source,
                    static_cast<int>(job.bytes));
      }
      complete_delivery_job(queue, number, job);
    }
  }
}

// Every thread of the agent: a typed put's piece packed or unpacked (protocol/typed_piece.h). The
// job's typed_piece_job and the layout it names (in pinned memory where the layout came from
// another process) are copied into shared memory once: the copy reads the layout's fields at
// every step.
__device__ inline void run_typed_piece_job(const protocol::delivery_job& job) {
  __shared__ protocol::typed_piece_job piece;
  __shared__ protocol::type_layout layout;
  const bool packing = job.kind == protocol::delivery_job_kind::pack_piece;
  if (threadIdx.x == 0) {
    piece = *reinterpret_cast<const protocol::typed_piece_job*>(job.source);
    layout = *reinterpret_cast<const protocol::type_layout*>(piece.layout);
  }
  __syncthreads();
  const protocol::type_layout contiguous = protocol::contiguous_layout(piece.total);
  char* const packed = reinterpret_cast<char*>(job.source) + protocol::typed_piece_header_bytes;
  const protocol::typed_copy copy =
      protocol::plan_typed_piece(piece, layout, contiguous, packed, job.bytes, packing);
  copy_range_in_block(copy, piece.stream_at, piece.stream_at + job.bytes);
}

// Called by every thread of the agent block; never returns to the user's kernel.
__device__ inline void serve_as_delivery_agent(const dcuda_context* ctx) {
  __shared__ protocol::delivery_job block_job;
  __shared__ std::uint32_t more;
  protocol::delivery_queue* queue = ctx->delivery_queue;
  std::uint32_t number = 0;  // warp 0's: the next job
  for (;;) {
    if (threadIdx.x < 32) {
      protocol::delivery_job job{};
      const bool copy = take_block_job(ctx, queue, number, job);
      if (threadIdx.x == 0) {
        block_job = job;
        more = copy ? 1u : 0u;
      }
    }
    __syncthreads();
    if (more == 0u) break;
    if (block_job.kind == protocol::delivery_job_kind::copy) {
      block_copy(reinterpret_cast<void*>(block_job.destination),
                 reinterpret_cast<const void*>(block_job.source), block_job.bytes);
    } else {
      run_typed_piece_job(block_job);
    }
    __syncthreads();
    if (threadIdx.x == 0) complete_delivery_job(queue, number, block_job);
    ++number;
  }
  exit_kernel();  // leave the kernel: the user's code after dcuda_gpu_init is for ranks
}

}  // namespace dcuda::device
