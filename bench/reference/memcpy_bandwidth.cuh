// Reference of local_bandwidth: cudaMemcpyAsync device to device, the copy every CUDA program
// can make (2130 GB/s payload for 1 GiB on an H200). Copies of one size
// run back to back between two CUDA events; the figure is payload bytes / time (1 GB = 1e9 B),
// the median over the repetitions.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "common/cuda_check.h"
#include "common/message_sizes.h"
#include "common/statistics.h"

namespace dcuda_bench {

class memcpy_reference {
 public:
  // Copies of up to `largest_copy` bytes.
  explicit memcpy_reference(std::size_t largest_copy)
      : source_(largest_copy), destination_(largest_copy) {
    BENCH_CUDA_CHECK(cudaMemset(source_.get(), 1, source_.size()));
    BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    BENCH_CUDA_CHECK(cudaEventCreate(&start_));
    BENCH_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~memcpy_reference() {
    cudaEventDestroy(stop_);
    cudaEventDestroy(start_);
    cudaStreamDestroy(stream_);
  }
  memcpy_reference(const memcpy_reference&) = delete;
  memcpy_reference& operator=(const memcpy_reference&) = delete;

  std::size_t largest_copy() const { return source_.size(); }

  // Payload GB/s of copies of `bytes` bytes (at most largest_copy()).
  double gigabytes_per_second(std::size_t bytes) {
    // Enough copies that a repetition moves ~2 GiB or makes 1000 copies, whichever is first:
    // milliseconds, far above the events' resolution.
    const int copies = static_cast<int>(std::clamp<std::size_t>(2 * GiB / bytes, 3, 1000));
    copy(bytes, copies);  // warm-up
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<double> rates;
    for (int repetition = 0; repetition < repetitions; ++repetition) {
      BENCH_CUDA_CHECK(cudaEventRecord(start_, stream_));
      copy(bytes, copies);
      BENCH_CUDA_CHECK(cudaEventRecord(stop_, stream_));
      BENCH_CUDA_CHECK(cudaEventSynchronize(stop_));
      float milliseconds = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start_, stop_));
      rates.push_back(static_cast<double>(bytes) * copies / (milliseconds * 1e-3) / 1e9);
    }
    return median(rates);
  }

 private:
  // Queues the copies; no host synchronisation, which would leave the GPU idle between events.
  void copy(std::size_t bytes, int copies) {
    for (int i = 0; i < copies; ++i) {
      BENCH_CUDA_CHECK(cudaMemcpyAsync(destination_.get(), source_.get(), bytes,
                                       cudaMemcpyDeviceToDevice, stream_));
    }
  }

  device_bytes source_;
  device_bytes destination_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace dcuda_bench
