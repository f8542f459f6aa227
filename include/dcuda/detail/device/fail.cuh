// Stopping the run on a misuse of the API. The first failing thread of the GPU writes one
// error_report into host memory and traps, which ends the kernel; dcuda_host_run then prints the
// report. Every other failing thread waits for that trap instead of trapping itself, because an
// early trap could end the kernel before the report is complete.
#pragma once

#include "dcuda/detail/protocol/device_context.h"

namespace dcuda::device {

// The report and the trap, for fail below and for the one check that must not cost its caller a
// call (the peer rings' poll: a call there makes the poll keep its values in the registers the
// ABI saves, on the latency path).
[[noreturn]] __device__ __forceinline__ void report_and_trap(const dcuda_context* ctx,
                                                             int world_rank, protocol::call call,
                                                             protocol::error_code code,
                                                             std::int64_t v0, std::int64_t v1,
                                                             std::int64_t v2, std::int64_t v3) {
  if (atomicExch(ctx->first_error, 1u) == 0u) {
    volatile protocol::error_report& report = *ctx->error;
    report.call_id = static_cast<std::uint16_t>(call);
    report.code = static_cast<std::uint16_t>(code);
    report.rank = world_rank;
    report.thread = static_cast<std::int32_t>(threadIdx.x);
    report.values[0] = v0;
    report.values[1] = v1;
    report.values[2] = v2;
    report.values[3] = v3;
    protocol::system_atomic<std::uint32_t>(ctx->error->written)
        .store(1u, cuda::memory_order_release);
    __threadfence_system();
    __trap();
  }
  for (;;) __nanosleep(1000);
}

// Out of line: inlined at every check, the report's stores sat between the instructions of the
// fast paths (docs/notes/performance-history.md, "Code size"). The call needs the ABI's registers,
// though (same page, "Registers"); inlined again it cost the particles 4.5% on one H100, so it
// stays out of line.
[[noreturn]] __device__ __noinline__ inline void fail(const dcuda_context* ctx, int world_rank,
                                                      protocol::call call,
                                                      protocol::error_code code,
                                                      std::int64_t v0 = 0, std::int64_t v1 = 0,
                                                      std::int64_t v2 = 0, std::int64_t v3 = 0) {
  report_and_trap(ctx, world_rank, call, code, v0, v1, v2, v3);
}

}  // namespace dcuda::device
