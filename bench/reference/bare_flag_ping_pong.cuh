// The hardware floor of a notification between two blocks of one GPU: thread 0 of two one-warp
// blocks ping-pongs a counter (release store; relaxed poll, then one acquire load), with no block
// barrier and no payload. dcuda's notify adds the rank-level work to this: a block barrier on
// each side and the argument checks.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <vector>

#include "common/cuda_check.h"
#include "common/statistics.h"
#include "dcuda/detail/device/clock.cuh"

namespace dcuda_bench {

namespace bare_flag_detail {
using device_flag = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;
inline constexpr int flag_stride = 32;  // words: one 128-byte line per flag
}  // namespace bare_flag_detail

__global__ void bare_flag_ping_pong_kernel(unsigned* flags, int warmup, int iterations,
                                           unsigned long long* repetition_ns) {
  using namespace bare_flag_detail;
  if (threadIdx.x != 0) return;
  unsigned* mine = flags + flag_stride * blockIdx.x;
  unsigned* theirs = flags + flag_stride * (1 - blockIdx.x);
  unsigned message = 0;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int round_trips = repetition < 0 ? warmup : iterations;
    const unsigned long long start = dcuda::device::global_time_ns();
    for (int i = 0; i < round_trips; ++i) {
      ++message;
      if (blockIdx.x == 0) device_flag(*theirs).store(message, cuda::memory_order_release);
      while (device_flag(*mine).load(cuda::memory_order_relaxed) != message) {
      }
      device_flag(*mine).load(cuda::memory_order_acquire);
      if (blockIdx.x == 1) device_flag(*theirs).store(message, cuda::memory_order_release);
    }
    if (blockIdx.x == 0 && repetition >= 0) {
      repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }
}

// One-way latency in microseconds, the median over the repetitions.
inline double run_bare_flag_ping_pong(int warmup, int iterations) {
  device_bytes flags(2 * bare_flag_detail::flag_stride * sizeof(unsigned));
  device_bytes repetition_ns(repetitions * sizeof(unsigned long long));
  BENCH_CUDA_CHECK(cudaMemset(flags.get(), 0, flags.size()));
  unsigned* flag_words = flags.get<unsigned>();
  auto* ns = repetition_ns.get<unsigned long long>();
  void* parameters[] = {&flag_words, &warmup, &iterations, &ns};
  BENCH_CUDA_CHECK(
      cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&bare_flag_ping_pong_kernel),
                                  dim3(2), dim3(32), parameters, 0, nullptr));
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned long long> nanoseconds(repetitions);
  BENCH_CUDA_CHECK(
      cudaMemcpy(nanoseconds.data(), ns, repetition_ns.size(), cudaMemcpyDeviceToHost));
  std::vector<double> one_way_us;
  for (const unsigned long long n : nanoseconds) {
    one_way_us.push_back(static_cast<double>(n) / iterations / 2 / 1000);
  }
  return median(one_way_us);
}

}  // namespace dcuda_bench
