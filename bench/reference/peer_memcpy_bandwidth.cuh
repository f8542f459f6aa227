// Reference of remote_bandwidth (peer path): what cudaMemcpyPeer moves from GPU 0 to GPU 1
// (396 GB/s on 2 H200s). Process 0 queues cudaMemcpyAsync copies from a
// buffer on its GPU into the buffer of process 1's GPU, mapped with CUDA IPC: a device-to-device
// copy between the two GPUs by the copy engines over NVLink, as cudaMemcpyPeerAsync makes it,
// without process 0 opening a context on the other GPU (which would also take memory there and
// need that GPU to be visible to it). Copies of one size run back to back between two CUDA
// events; the figure is payload bytes / time (1 GB = 1e9 B), the median over the repetitions.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "common/cuda_check.h"
#include "common/ipc_buffer.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/statistics.h"

namespace dcuda_bench {

class peer_memcpy_reference {
 public:
  // Collective over the 2 processes of `world` (one node, one GPU each): copies of up to
  // `largest_copy` bytes.
  peer_memcpy_reference(const mpi_world& world, std::size_t largest_copy)
      : world_(world), buffers_(world, largest_copy) {
    BENCH_CUDA_CHECK(cudaMemset(buffers_.mine(), 1, buffers_.size()));
    BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    BENCH_CUDA_CHECK(cudaEventCreate(&start_));
    BENCH_CUDA_CHECK(cudaEventCreate(&stop_));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~peer_memcpy_reference() {
    cudaEventDestroy(stop_);
    cudaEventDestroy(start_);
    cudaStreamDestroy(stream_);
  }
  peer_memcpy_reference(const peer_memcpy_reference&) = delete;
  peer_memcpy_reference& operator=(const peer_memcpy_reference&) = delete;

  // Collective: payload GB/s of copies of `bytes` bytes (at most the largest copy) from process
  // 0's GPU to process 1's, on both processes.
  double gigabytes_per_second(std::size_t bytes) {
    double rate = 0;
    if (world_.process() == 0) {
      // As memcpy_bandwidth.cuh: ~2 GiB or 1000 copies per repetition, whichever comes first.
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
      rate = median(rates);
    }
    return world_.from_process0(rate);  // process 1 waits here meanwhile
  }

 private:
  void copy(std::size_t bytes, int copies) {
    for (int i = 0; i < copies; ++i) {
      BENCH_CUDA_CHECK(
          cudaMemcpyAsync(buffers_.peers(), buffers_.mine(), bytes, cudaMemcpyDefault, stream_));
    }
  }

  const mpi_world& world_;
  ipc_buffer_pair buffers_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace dcuda_bench
