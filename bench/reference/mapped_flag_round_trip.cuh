// Reference of host_roundtrip: the hand-written minimum of a device -> host -> device round trip,
// with both words in pinned host memory mapped into the device (3.1 us on
// an H200). Thread 0 of a one-block kernel stores a counter into the "to host" word with
// a system-scope release store and polls the "to device" word with acquire loads; the block
// synchronises once per round trip, as dcuda_ping_host does. A host thread spins on the "to
// host" word and copies every new value into the "to device" word.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "common/cuda_check.h"
#include "common/statistics.h"
#include "dcuda/detail/device/clock.cuh"

namespace dcuda_bench {

using system_flag = cuda::atomic_ref<unsigned, cuda::thread_scope_system>;

struct mapped_flag_args {
  unsigned* to_host;                  // device pointer to the mapped word the host polls
  unsigned* to_device;                // device pointer to the mapped word the device polls
  int warmup;                         // round trips before the first timed repetition
  int round_trips;                    // per repetition
  unsigned long long* repetition_ns;  // [repetitions], device memory
};

__global__ void mapped_flag_round_trip_kernel(mapped_flag_args args) {
  unsigned message = 0;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int round_trips = repetition < 0 ? args.warmup : args.round_trips;
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int i = 0; i < round_trips; ++i) {
      ++message;
      if (threadIdx.x == 0) {
        system_flag(*args.to_host).store(message, cuda::memory_order_release);
        while (system_flag(*args.to_device).load(cuda::memory_order_acquire) != message) {
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0 && repetition >= 0) {
      args.repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }
}

// Runs the reference once and returns the median round trip in microseconds. The calling thread
// is the host side of the ping-pong; it stops early if the kernel ends (a launch failure) so
// that it cannot spin forever.
inline double run_mapped_flag_round_trip(int threads_per_block, int warmup, int round_trips) {
  constexpr std::size_t line = 128;  // the two words on separate cache lines
  void* host_words = nullptr;
  BENCH_CUDA_CHECK(cudaHostAlloc(&host_words, 2 * line, cudaHostAllocMapped));
  auto* to_host = static_cast<unsigned*>(host_words);
  auto* to_device = reinterpret_cast<unsigned*>(static_cast<char*>(host_words) + line);
  *to_host = 0;
  *to_device = 0;
  void* device_words = nullptr;
  BENCH_CUDA_CHECK(cudaHostGetDevicePointer(&device_words, host_words, 0));
  device_bytes repetition_ns(repetitions * sizeof(unsigned long long));

  cudaStream_t stream = nullptr;
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const mapped_flag_args args{static_cast<unsigned*>(device_words),
                              reinterpret_cast<unsigned*>(static_cast<char*>(device_words) + line),
                              warmup, round_trips, repetition_ns.get<unsigned long long>()};
  mapped_flag_round_trip_kernel<<<1, threads_per_block, 0, stream>>>(args);
  BENCH_CUDA_CHECK(cudaGetLastError());

  const auto total = static_cast<unsigned>(warmup + repetitions * round_trips);
  unsigned answered = 0;
  for (std::uint64_t spins = 1; answered != total; ++spins) {
    const unsigned seen = system_flag(*to_host).load(cuda::memory_order_acquire);
    if (seen != answered) {
      answered = seen;
      system_flag(*to_device).store(seen, cuda::memory_order_release);
    } else if (spins % (1u << 20) == 0 && cudaStreamQuery(stream) != cudaErrorNotReady) {
      break;  // the kernel ended without asking again: its error is reported below
    }
  }
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  BENCH_CUDA_CHECK(cudaStreamDestroy(stream));

  std::vector<unsigned long long> nanoseconds(repetitions);
  BENCH_CUDA_CHECK(cudaMemcpy(nanoseconds.data(), repetition_ns.get(), repetition_ns.size(),
                              cudaMemcpyDeviceToHost));
  BENCH_CUDA_CHECK(cudaFreeHost(host_words));
  std::vector<double> round_trip_us;
  for (const unsigned long long ns : nanoseconds) {
    round_trip_us.push_back(static_cast<double>(ns) / round_trips / 1000);
  }
  return median(round_trip_us);
}

}  // namespace dcuda_bench
