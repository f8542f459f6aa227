// The ranks' ping-pong that the host-initiated benchmarks (host_stream_latency,
// host_stream_network) stand beside theirs: dcuda_put_notify + dcuda_wait_notifications between
// two ranks of the persistent kernel (common/notified_ping_pong.cuh), one way at every size, in a
// dcuda context of its own.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/device_payload.h"
#include "common/mpi_world.h"
#include "common/notified_ping_pong.cuh"
#include "common/statistics.h"

namespace dcuda_bench {

// A rank of 512 threads per process, as remote_latency's: the kernels of the ranks' ping-pong
// between the first ranks of two processes, and between the two ranks of each process.
inline constexpr int ranks_ping_pong_threads = 512;
__global__ void __launch_bounds__(ranks_ping_pong_threads, 1)
    two_process_ping_pong_kernel(dcuda_context_handle dcuda) {
  run_two_process_ping_pong(dcuda);
}
__global__ void __launch_bounds__(ranks_ping_pong_threads, 1)
    same_gpu_ping_pong_kernel(dcuda_context_handle dcuda) {
  run_same_gpu_ping_pong(dcuda);
}

// `kernel` runs run_two_process_ping_pong or run_same_gpu_ping_pong with `threads_per_rank`
// threads; `settings` as dcuda_session's; `window_bytes`: each process's window. Process 0's
// figures, on every process; `bytes_arrived` turns false where a payload did not arrive intact.
inline std::vector<figure> ranks_ping_pong_us(const mpi_world& world, const options& command_line,
                                              dcuda_kernel_t kernel, int threads_per_rank,
                                              const std::vector<std::string>& settings,
                                              std::size_t window_bytes,
                                              const std::vector<std::size_t>& sizes,
                                              bool& bytes_arrived) {
  std::vector<figure> one_way;
  int mismatches = 0;
  {
    dcuda_session session(command_line, kernel, threads_per_rank, settings);
    const device_bytes window(window_bytes);
    for (const std::size_t size : sizes) {
      two_process_latency_run run{};
      run.op = operation::put_notify;
      run.size = static_cast<int>(size);
      run.round_trips = peer_round_trips_for(size);
      run.warmup = warmup_for(run.round_trips);
      run.window = window.get<unsigned char>();
      BENCH_CUDA_CHECK(cudaMemset(window.get(), 0, window.size()));
      BENCH_CUDA_CHECK(cudaDeviceSynchronize());
      session.run(run);
      mismatches += run.mismatches;
      const one_way_figure figure_us = one_way_us(run.repetition_ns, run.round_trips);
      one_way.push_back({figure_us.median_us, figure_us.min_us, figure_us.max_us});
    }
  }
  // Process 0's timings, on every process (no MPI while the context lived).
  for (figure& f : one_way) f = world.from_process0(f);
  bytes_arrived = bytes_arrived && mismatches == 0;
  return one_way;
}

}  // namespace dcuda_bench
