// The floor of a stream-ordered ping-pong between the GPUs of 2 processes of one node: the
// payload copied by the copy engines (cudaMemcpyAsync into the other GPU's memory, mapped with
// CUDA IPC), then a flag written by a stream memory operation (cuStreamWriteValue32 into the other
// GPU's memory), which the other stream waits for (cuStreamWaitValue32). No kernel, no counting:
// one writer per flag. What host_stream_latency and nvshmem_latency compare their on-stream
// figures with.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/cuda_check.h"
#include "common/ipc_buffer.h"
#include "common/mpi_world.h"
#include "common/stream_ping_pong.h"

namespace dcuda_bench {

class stream_memop_ping_pong {
 public:
  // Collective; `largest` bytes of payload at most.
  stream_memop_ping_pong(const mpi_world& world, std::size_t largest)
      : world_(world), payload_(world, largest), flags_(world, 256) {}

  // One way in us on every process (collective); the bytes received checked by `check` (the
  // received buffer on this GPU, called after the run).
  template <typename Check>
  double run(cudaStream_t stream, const unsigned char* source, std::size_t size, Check&& check) {
    BENCH_CUDA_CHECK(cudaMemset(flags_.mine(), 0, flags_.size()));
    BENCH_CUDA_CHECK(cudaMemset(payload_.mine(), 0, size));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    world_.check(MPI_Barrier(world_.comm()), "MPI_Barrier");
    const auto send = [&](int message) {
      if (size > 0) {
        BENCH_CUDA_CHECK(
            cudaMemcpyAsync(payload_.peers(), source, size, cudaMemcpyDefault, stream));
      }
      driver_check(
          cuStreamWriteValue32(stream, reinterpret_cast<CUdeviceptr>(flags_.peers()),
                               static_cast<cuuint32_t>(message), CU_STREAM_WRITE_VALUE_DEFAULT),
          "cuStreamWriteValue32");
    };
    const auto wait = [&](int message) {
      driver_check(cuStreamWaitValue32(stream, reinterpret_cast<CUdeviceptr>(flags_.mine()),
                                       static_cast<cuuint32_t>(message), CU_STREAM_WAIT_VALUE_GEQ),
                   "cuStreamWaitValue32");
    };
    const double one_way = stream_ping_pong_us(world_, stream, send, wait).median;
    check(payload_.mine());
    return one_way;
  }

 private:
  void driver_check(CUresult status, const char* call) const {
    if (status != CUDA_SUCCESS) {
      fail_job("stream_memop_ping_pong", std::string(call) + " failed with CUDA driver error " +
                                             std::to_string(static_cast<int>(status)));
    }
  }

  const mpi_world& world_;
  ipc_buffer_pair payload_;
  ipc_buffer_pair flags_;
};

}  // namespace dcuda_bench
