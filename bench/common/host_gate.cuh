// A gate that holds a stream until the host has queued what follows it, so that a benchmark times
// the GPU's work and not the host's speed of queueing: a one-thread kernel polls a word of pinned
// host memory until the host sets it to the gate's number. A kernel rather than
// cuStreamWaitValue32, which has no time limit: this one gives up after gate_limit_ns, saying so
// in gave_up(). Either holds the hardware queue of its stream; nothing the host does to open it
// waits for the GPU.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "common/cuda_check.h"
#include "dcuda/detail/device/clock.cuh"

namespace dcuda_bench {

inline constexpr std::uint64_t gate_limit_ns = 60'000'000'000ull;

__global__ void gate_kernel(const volatile unsigned* opened, unsigned gate, unsigned* gave_up) {
  const std::uint64_t start = dcuda::device::global_time_ns();
  while (*opened < gate) {
    if (dcuda::device::global_time_ns() - start > gate_limit_ns) {
      *gave_up = 1;
      return;
    }
  }
}

// The gate's two words of pinned host memory, mapped for the GPU: the gate opened (the host
// writes), whether a gate gave up (the GPU writes).
class host_gate {
 public:
  host_gate() : words_(2 * sizeof(unsigned), cudaHostAllocMapped) {
    words()[0] = 0;
    words()[1] = 0;
  }

  // Queues the gate numbered `gate` (from 1, growing) on `stream`.
  void queue(unsigned gate, cudaStream_t stream) const {
    gate_kernel<<<1, 1, 0, stream>>>(words(), gate, words_.get<unsigned>() + 1);
    BENCH_CUDA_CHECK(cudaGetLastError());
  }
  // Lets the gates up to `gate` pass.
  void open(unsigned gate) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    words()[0] = gate;
  }
  bool gave_up() const { return words()[1] != 0; }

 private:
  volatile unsigned* words() const { return words_.get<volatile unsigned>(); }

  pinned_bytes words_;
};

}  // namespace dcuda_bench
