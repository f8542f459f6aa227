// Reference of the message-rate tables of queued operations: an empty one-thread kernel launched
// stream_batch_messages times back to back on one stream, the time per launch. Any operation
// that is one kernel per message goes no faster when the host queues them one by one.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "common/cuda_check.h"
#include "common/statistics.h"
#include "common/stream_ping_pong.h"

namespace dcuda_bench {

__global__ void empty_launch_kernel() {}

// Microseconds per launch, the median of `repetitions` (after a warm-up), with their range.
inline figure launch_floor_us() {
  owned_stream stream;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  BENCH_CUDA_CHECK(cudaEventCreate(&start));
  BENCH_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> per_launch_us;
  for (int repetition = 0; repetition <= repetitions; ++repetition) {
    BENCH_CUDA_CHECK(cudaEventRecord(start, stream.get()));
    for (int i = 0; i < stream_batch_messages; ++i)
      empty_launch_kernel<<<1, 1, 0, stream.get()>>>();
    BENCH_CUDA_CHECK(cudaGetLastError());
    BENCH_CUDA_CHECK(cudaEventRecord(stop, stream.get()));
    BENCH_CUDA_CHECK(cudaEventSynchronize(stop));
    float milliseconds = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
    if (repetition > 0) {
      per_launch_us.push_back(static_cast<double>(milliseconds) * 1e3 / stream_batch_messages);
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return summary(per_launch_us);
}

}  // namespace dcuda_bench
