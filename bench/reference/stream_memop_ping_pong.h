// The floor of a stream-ordered ping-pong between the GPUs of 2 processes of one node: the
// payload copied by the copy engines (cudaMemcpyAsync into the other GPU's memory, mapped with
// CUDA IPC), then a flag written by a stream memory operation (cuStreamWriteValue32 into the other
// GPU's memory), which the other stream waits for (cuStreamWaitValue32). No kernel, no counting:
// one writer per flag. What host_stream_latency and nvshmem_latency compare their on-stream
// figures with. two_stream_memop_ping_pong: the same between two streams of one process, within
// its GPU.
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

inline void driver_check(CUresult status, const char* call) {
  if (status != CUDA_SUCCESS) {
    fail_job("stream_memop_ping_pong", std::string(call) + " failed with CUDA driver error " +
                                           std::to_string(static_cast<int>(status)));
  }
}

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
  const mpi_world& world_;
  ipc_buffer_pair payload_;
  ipc_buffer_pair flags_;
};

class two_stream_memop_ping_pong {
 public:
  // `largest` bytes of payload at most.
  explicit two_stream_memop_ping_pong(std::size_t largest)
      : largest_(largest), payload_(2 * largest), flags_(2 * flag_stride) {}

  // One way in us; the bytes each stream received checked by `check` (its buffer on this GPU,
  // called after the run).
  template <typename Check>
  double run(cudaStream_t first, cudaStream_t second, const unsigned char* source, std::size_t size,
             Check&& check) {
    BENCH_CUDA_CHECK(cudaMemset(flags_.get(), 0, flags_.size()));
    BENCH_CUDA_CHECK(cudaMemset(payload_.get(), 0, payload_.size()));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    const cudaStream_t streams[2] = {first, second};
    const auto send = [&](int side, int message) {
      if (size > 0) {
        BENCH_CUDA_CHECK(cudaMemcpyAsync(buffer_of(1 - side), source, size,
                                         cudaMemcpyDeviceToDevice, streams[side]));
      }
      driver_check(
          cuStreamWriteValue32(streams[side], flag_of(1 - side), static_cast<cuuint32_t>(message),
                               CU_STREAM_WRITE_VALUE_DEFAULT),
          "cuStreamWriteValue32");
    };
    const auto wait = [&](int side, int message) {
      driver_check(cuStreamWaitValue32(streams[side], flag_of(side),
                                       static_cast<cuuint32_t>(message), CU_STREAM_WAIT_VALUE_GEQ),
                   "cuStreamWaitValue32");
    };
    const double one_way = two_stream_ping_pong_us(first, second, send, wait).median;
    check(buffer_of(0));
    check(buffer_of(1));
    return one_way;
  }

 private:
  static constexpr std::size_t flag_stride = 128;  // each flag on a line of its own

  unsigned char* buffer_of(int side) const {
    return payload_.get<unsigned char>() + side * largest_;
  }
  CUdeviceptr flag_of(int side) const {
    return reinterpret_cast<CUdeviceptr>(flags_.get<unsigned char>() + side * flag_stride);
  }

  std::size_t largest_;
  device_bytes payload_;
  device_bytes flags_;
};

}  // namespace dcuda_bench
