// Where a dcuda rank's time goes (a case study's --phases 1): thread 0 of the rank reads the
// GPU's global timer at each phase boundary and adds the time since the previous boundary to the
// phase that just ended. Boundaries right after a block barrier or a collective dcuda call (which
// ends with one) make a phase the whole rank's, not only thread 0's: the barrier phase is the
// time the rank waits for its slowest warp, the wait phase the time dcuda waits for
// notifications. docs/case-studies.md shows what the stencil's phases told us.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cuda_resources.h"

enum rank_phase : int { phase_compute, phase_barrier, phase_send, phase_wait, phase_count };

__device__ inline std::uint64_t global_timer_ns() {
  std::uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

struct rank_phase_clock {
  bool on = false;
  std::uint64_t last = 0;
  std::uint64_t ns[phase_count] = {};

  __device__ void start(bool enabled) {
    on = enabled && threadIdx.x == 0;
    if (on) last = global_timer_ns();
  }
  // The phase that ends now.
  __device__ void end(rank_phase phase) {
    if (!on) return;
    const std::uint64_t now = global_timer_ns();
    ns[phase] += now - last;
    last = now;
  }
  // Into out[0..phase_count): this rank's row of the GPU's table.
  __device__ void store(std::uint64_t* out) const {
    if (!on) return;
    for (int p = 0; p < phase_count; ++p) out[p] = ns[p];
  }
};

// One line per phase: the mean and the largest over a GPU's ranks, in microseconds per
// iteration; `phase_ns` (device memory) holds phase_count values per rank, as
// rank_phase_clock::store wrote them. Prints nothing when it is empty (--phases 0).
inline void print_rank_phases(const device_array<std::uint64_t>& phase_ns, int process,
                              int iterations) {
  static const char* const names[phase_count] = {"compute", "barrier", "send", "wait"};
  const std::size_t ranks = phase_ns.size() / phase_count;
  if (ranks == 0 || iterations <= 0) return;
  std::vector<std::uint64_t> table(phase_ns.size());
  APP_CUDA(cudaMemcpy(table.data(), phase_ns.get(), phase_ns.bytes(), cudaMemcpyDeviceToHost));
  for (int p = 0; p < phase_count; ++p) {
    double sum = 0, most = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      const double us = static_cast<double>(table[r * phase_count + p]) / 1e3 / iterations;
      sum += us;
      most = std::max(most, us);
    }
    std::printf("process %d: phase %-8s %9.2f us/iteration mean, %9.2f max over %zu ranks\n",
                process, names[p], sum / static_cast<double>(ranks), most, ranks);
  }
}
