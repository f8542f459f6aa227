// Entry of every call that all threads of a rank make together (thesis 3.3.2; a "rank call";
// "collective" in dcuda means a collective of DCUDA_COMM_WORLD). It synchronises
// the block, so a call made right after single-thread work sees that work, and it stops the run
// with a report when threads of the rank have already returned from the kernel (the barrier then
// counts fewer threads than the block has).
//
// Why not __activemask(): a warp that diverged earlier (a spin loop, an `if (threadIdx.x == 0)`
// branch) may reach the next call before it reconverges, so an incomplete mask does not prove a
// misuse; checking it stopped correct programs. A call made by a subset of threads while the
// others are still running is not detected here; if it hangs, the watchdog names the waits.
#pragma once

#include "dcuda/detail/device/fail.cuh"

namespace dcuda::device {

// Stops the run: `arrived` threads of the rank made a call that all must make. Out of line, so
// that the entry of every call keeps no value for it across the barrier.
__device__ __noinline__ inline void report_partial_rank_call(const dcuda_context* ctx,
                                                             protocol::call call, int arrived) {
  fail(ctx, ctx->rank_start + static_cast<int>(blockIdx.x), call,
       protocol::error_code::partial_rank_call, arrived, blockDim.x);
}

// `ctx` by reference (gst.ctx, in shared memory): it is read only on the failure path, after the
// barrier. Passed by value, the caller loaded it before the barrier and kept it, or spilled it,
// across the barrier on every call's path; and a global load of the context, from L2 after every
// acquire, would sit on that path.
__device__ inline void enter_rank_call(const dcuda_context* const& ctx, protocol::call call) {
  const int arrived = __syncthreads_count(1);
  if (arrived != static_cast<int>(blockDim.x)) report_partial_rank_call(ctx, call, arrived);
}

}  // namespace dcuda::device
