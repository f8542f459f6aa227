// The three stages on the GPU, over a run of rows, the points shared out among `threads` threads
// (a dcuda rank: its block; a baseline kernel: its whole grid). Each point is one call of the
// formula in stencil_problem.h.
#pragma once

#include "stencil_problem.h"

namespace stencil {

// Every point of rows j_begin..j_end-1, thread `thread` of `threads` taking every threads-th
// point (consecutive threads, consecutive x: coalesced), level by level: all of the rows at
// level 0, then at level 1, ... A point reads its field at the rows next to its own, one plane
// (nx * nz values) away; going level by level keeps what is reused between rows a few rows of
// one level. Going row by row (each row's whole plane at once), the 131 ranks of a GPU would
// each keep two planes in use, 67 MB at the default size, more than the H200's 50 MB L2, and
// read every value three times from memory (measured: 1.8x slower than the baselines).
// Points go in batches of four per thread, the four values computed (their loads in flight
// together) before any is stored. The baselines' kernels run the same code.
// Positions are 32-bit: setup_from keeps a GPU's rows below 2^31 points.
template <typename Compute, typename Store>
__device__ inline void for_rows(const grid_shape& g, int j_begin, int j_end, unsigned thread,
                                unsigned threads, Compute compute, Store store) {
  constexpr unsigned batch = 4;
  const unsigned nx = static_cast<unsigned>(g.nx);
  const unsigned rows = static_cast<unsigned>(j_end - j_begin);
  const unsigned level_points = rows * nx;  // of our rows, at one level
  const unsigned count = level_points * static_cast<unsigned>(g.nz);
  const unsigned first_row = static_cast<unsigned>(g.plane_start(j_begin));
  const unsigned plane = static_cast<unsigned>(g.plane_size());
  using value = decltype(compute(0u, 0));
  for (unsigned first = thread; first < count; first += threads * batch) {
    value values[batch];
    unsigned at[batch];
#pragma unroll
    for (unsigned b = 0; b < batch; ++b) {
      const unsigned p = first + b * threads;
      if (p < count) {
        const unsigned k = p / level_points, in_level = p - k * level_points;
        const unsigned row = in_level / nx, i = in_level - row * nx;
        at[b] = first_row + row * plane + k * nx + i;
        values[b] = compute(at[b], static_cast<int>(i));
      }
    }
#pragma unroll
    for (unsigned b = 0; b < batch; ++b)
      if (first + b * threads < count) store(at[b], values[b]);
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
      [&](unsigned at, int i) {
        return flux_pair{x_flux(lap, g, at, i), y_flux(lap, g, at)};
      },
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
__device__ inline unsigned global_thread() {
  return blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ inline unsigned global_threads() {
  return gridDim.x * blockDim.x;
}

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
