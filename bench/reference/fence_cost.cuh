// The memory-consistency cost S of dcuda's performance model (docs/model.md): what the
// system-scope release fence before every dcuda notification costs, measured with that very fence
// beyond the stores it orders. Thread 0 of one block stores a 4-byte payload word and then a flag
// word (on another 128-byte line) into the target memory, `iterations` times, with a system-scope
// release fence between the two stores ("fenced") or without it ("unfenced"); S is the difference
// per iteration. The fence waits until the payload store is visible where the target lies: this
// GPU's memory (same GPU), another GPU's over NVLink (peer path), or pinned host memory over PCIe
// (where the network path's records go to the host proxy).
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/statistics.h"
#include "dcuda/detail/device/clock.cuh"
#include "dcuda/detail/device/memory_order.cuh"

namespace dcuda_bench {

namespace fence_cost_detail {
inline constexpr int line_words = 32;  // 128 bytes: the flag on a line of its own
using system_word = cuda::atomic_ref<unsigned, cuda::thread_scope_system>;
}  // namespace fence_cost_detail

// `target`: 2 * line_words words (payload line, flag line). One time per repetition, in ns.
__global__ void fence_cost_kernel(unsigned* target, int fenced, int warmup, int iterations,
                                  unsigned long long* repetition_ns) {
  using namespace fence_cost_detail;
  if (threadIdx.x != 0) return;
  volatile unsigned* payload = target;
  unsigned* flag = target + line_words;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int count = repetition < 0 ? warmup : iterations;
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int i = 0; i < count; ++i) {
      *payload = static_cast<unsigned>(i);
      if (fenced) dcuda::device::fence_release_sys();
      system_word(*flag).store(static_cast<unsigned>(i), cuda::memory_order_relaxed);
    }
    if (repetition >= 0) repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
  }
}

struct fence_cost {
  figure fenced_us;    // per store pair with the fence: median, min, max of the repetitions
  double unfenced_us;  // the same without the fence, median
};

// Both variants on the current GPU, into `target` (2 * 128 bytes the GPU can store to).
inline fence_cost measure_fence_cost(unsigned* target, int warmup = 1000, int iterations = 10000) {
  device_bytes repetition_ns(repetitions * sizeof(unsigned long long));
  auto* ns = repetition_ns.get<unsigned long long>();
  const auto per_iteration_us = [&](int fenced) {
    fence_cost_kernel<<<1, 32>>>(target, fenced, warmup, iterations, ns);
    BENCH_CUDA_CHECK(cudaGetLastError());
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned long long> nanoseconds(repetitions);
    BENCH_CUDA_CHECK(
        cudaMemcpy(nanoseconds.data(), ns, repetition_ns.size(), cudaMemcpyDeviceToHost));
    std::vector<double> us;
    for (const unsigned long long value : nanoseconds) {
      us.push_back(static_cast<double>(value) / iterations / 1e3);
    }
    return summary(us);
  };
  const figure fenced = per_iteration_us(1);
  return {fenced, per_iteration_us(0).median};
}

// The table dcuda-model reads S from: its title starts with "memory-consistency cost S:" and
// names where the target lies ("same GPU", "peer path", "network path").
inline table fence_cost_table(const fence_cost& cost, const std::string& place,
                              const std::string& target) {
  table result{
      "memory-consistency cost S: a 4 B store, a system-scope release fence and a flag "
      "store, per message, " +
          place + " (" + target + ")",
      "us",
      "no fence",
      "the same two stores without the fence, one thread",
      1,
      1,
      1,
      {}};
  result.rows.push_back(
      {4, cost.fenced_us.median, cost.unfenced_us, cost.fenced_us.min, cost.fenced_us.max});
  return result;
}

}  // namespace dcuda_bench
