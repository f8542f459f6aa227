// What the three particles programs share on the host: their options, the problem's size on one
// GPU, the particles in device memory, and the end of a run: the error check, the result check
// against the CPU reference (gathered on process 0) and the report.
#pragma once

#include <cstdint>

#include "cuda_resources.h"
#include "options.h"
#include "particles_problem.h"
#include "mpi_process.h"

namespace particles {

// Sizes per GPU (weak scaling: the box has segments * GPUs segments and particles * GPUs
// particles). Defaults: the thesis's size, a 416 x 416 box (416 segments of cutoff 1) with 410,600
// particles per GPU: 2.37 per unit area, about 987 per segment, 1.2e9 pair distances per iteration
// (each particle against the ~2960 of its three segments). One H200 takes 1.05 ms per iteration
// (NCCL-CUDA) to 1.28 ms (dcuda) for it, so the thesis's size is kept.
app_options parse_options(int argc, char** argv, const char* program);

struct run_setup {
  int width = 0;
  int segments = 0;            // per GPU
  std::int64_t particles = 0;  // per GPU
  int capacity = 0;            // slots per segment
  int iterations = 0;
  int warmup = 0;
  bool check = false;
  std::uint64_t seed = 0;

  box whole(int processes) const { return {width, segments * processes}; }
  store_layout layout() const { return {segments, capacity}; }
};
run_setup setup_from(const app_options& options);

// Largest deviation allowed from the CPU reference, in position or velocity. Every version adds
// the same terms in the same order with the same IEEE operations (particles_problem.h), so the
// deviation is 0 (measured). The tolerance leaves room for a compiler that fuses after all: the
// dynamics are chaotic, but mildly at the checked sizes (one ulp changed in one particle of the
// 4-GPU small problem grows to 1.4e-14 in 12 iterations, 4e-12 in 100), so checked runs stay
// small and short, and 1e-9 still catches any wrong force, step or exchange (those change
// positions by 1e-6 and more).
constexpr double tolerance = 1e-9;

// One process's particles in device memory: the four stores (particles_problem.h) in one
// allocation, the current store holding the process's segments of the input; and the error
// record the kernels write.
struct device_particles {
  device_particles(const run_setup& setup, int process, int processes);
  // Memory and error zeroed, this process's particles in the current store: the state a run
  // starts from (--runs).
  void load_input(const run_setup& setup, int process, int processes) const;
  store_layout layout;
  device_array<unsigned char> memory;
  device_array<run_error> error;
  stores views() const { return stores_in(memory.get(), layout); }
};

// The end of every version's run, collective over MPI_COMM_WORLD: a run error (a segment over its
// capacity, a particle too fast) ends the program naming it; with --check 1, the particles
// against the CPU reference; then process 0's result line (the largest time of any process).
// Returns the program's exit status: 1 when the check failed.
int check_and_report(const app_options& options, const run_setup& setup, const run_figures& run,
                     const device_particles& state);

}  // namespace particles
