// Entry of every call that all threads of a rank make together (thesis 3.3.2). It synchronises
// the block, so a call made right after single-thread work sees that work, and it catches the
// two commonest misuses instead of hanging: a call made by only some threads of a warp (e.g.
// under `if (threadIdx.x == 0)`), and a call made after other threads of the rank returned.
#pragma once

#include "device/fail.cuh"

namespace dcuda::device {

__device__ inline unsigned lanes_of_this_warp() {
  const unsigned first_thread = threadIdx.x & ~31u;
  const unsigned lanes = blockDim.x - first_thread < 32u ? blockDim.x - first_thread : 32u;
  return lanes == 32u ? 0xffffffffu : (1u << lanes) - 1u;
}

__device__ inline void enter_collective(const dcuda_context* ctx, protocol::call call) {
  const unsigned active = __activemask();
  const int world_rank = ctx->rank_start + static_cast<int>(blockIdx.x);
  if (active != lanes_of_this_warp()) {
    fail(ctx, world_rank, call, protocol::error_code::partial_collective, __popc(active),
         blockDim.x);
  }
  const int arrived = __syncthreads_count(1);
  if (arrived != static_cast<int>(blockDim.x)) {
    fail(ctx, world_rank, call, protocol::error_code::partial_collective, arrived, blockDim.x);
  }
}

}  // namespace dcuda::device
