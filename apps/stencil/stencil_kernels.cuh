// The three stages on the GPU, over a run of rows, the points shared out among `threads` threads
// (a dcuda rank: its block; a baseline kernel: its whole grid). Each point is one call of the
// formula in stencil_problem.h.
#pragma once

#include "stencil_problem.h"

namespace stencil {

// Every point of rows j_begin..j_end-1, thread `thread` of `threads` taking every threads-th
// point (consecutive threads, consecutive x: coalesced). The rows are contiguous, so a point's
// position is the rows' start plus its number; only x is decoded (the formulas need it at the
// x edges). Points go in batches of four per thread, the four values computed (their loads in
// flight together) before any is stored: a dcuda rank is one block of 1024 threads per SM, half
// of what an SM holds, and the batches give its loads the parallelism the missing occupancy
// would have given (docs/case-studies.md). The baselines' kernels run the same code.
// Positions are 32-bit: setup_from keeps a GPU's rows below 2^31 points.
template <typename Compute, typename Store>
__device__ inline void for_rows(const grid_shape& g, int j_begin, int j_end, unsigned thread,
                                unsigned threads, Compute compute, Store store) {
  constexpr unsigned batch = 4;
  const unsigned start = static_cast<unsigned>(g.plane_start(j_begin));
  const unsigned count = static_cast<unsigned>(g.plane_size()) * static_cast<unsigned>(j_end - j_begin);
  const unsigned nx = static_cast<unsigned>(g.nx);
  using value = decltype(compute(0u, 0));
  for (unsigned first = thread; first < count; first += threads * batch) {
    value values[batch];
#pragma unroll
    for (unsigned b = 0; b < batch; ++b) {
      const unsigned p = first + b * threads;
      if (p < count) values[b] = compute(start + p, static_cast<int>(p % nx));
    }
#pragma unroll
    for (unsigned b = 0; b < batch; ++b) {
      const unsigned p = first + b * threads;
      if (p < count) store(start + p, values[b]);
    }
  }
}

struct flux_pair {
  double x, y;
};

__device__ inline void laplacian_rows(const grid_shape& g, const double* in, double* lap,
                                      int j_begin, int j_end, unsigned thread, unsigned threads) {
  for_rows(
      g, j_begin, j_end, thread, threads,
      [&](unsigned at, int i) { return laplacian(in, g, at, i); },
      [&](unsigned at, double v) { lap[at] = v; });
}

__device__ inline void flux_rows(const grid_shape& g, const double* lap, double* flx, double* fly,
                                 int j_begin, int j_end, unsigned thread, unsigned threads) {
  for_rows(
      g, j_begin, j_end, thread, threads,
      [&](unsigned at, int i) { return flux_pair{x_flux(lap, g, at, i), y_flux(lap, g, at)}; },
      [&](unsigned at, flux_pair v) {
        flx[at] = v.x;
        fly[at] = v.y;
      });
}

__device__ inline void diffusion_rows(const grid_shape& g, const double* in, const double* flx,
                                      const double* fly, double* out, int j_begin, int j_end,
                                      unsigned thread, unsigned threads) {
  for_rows(
      g, j_begin, j_end, thread, threads,
      [&](unsigned at, int i) { return diffused(in, flx, fly, g, at, i); },
      [&](unsigned at, double v) { out[at] = v; });
}

// The baselines' kernels: one stage over all rows of the GPU.
__device__ inline unsigned global_thread() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ inline unsigned global_threads() { return gridDim.x * blockDim.x; }

__global__ void laplacian_kernel(grid_shape g, const double* in, double* lap) {
  laplacian_rows(g, in, lap, 0, g.ny, global_thread(), global_threads());
}
__global__ void flux_kernel(grid_shape g, const double* lap, double* flx, double* fly) {
  flux_rows(g, lap, flx, fly, 0, g.ny, global_thread(), global_threads());
}
__global__ void diffusion_kernel(grid_shape g, const double* in, const double* flx,
                                 const double* fly, double* out) {
  diffusion_rows(g, in, flx, fly, out, 0, g.ny, global_thread(), global_threads());
}

}  // namespace stencil
