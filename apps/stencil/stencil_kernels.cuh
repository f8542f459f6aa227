// The three stages on the GPU, over a run of rows, the points shared out among `threads` threads
// (a dcuda rank: its block; a baseline kernel: its whole grid). Each point is one call of the
// formula in stencil_problem.h.
#pragma once

#include "stencil_problem.h"

namespace stencil {

// Calls point(i, j, k) for every point of rows j_begin..j_end-1, thread `thread` of `threads`
// taking every threads-th point (consecutive threads, consecutive x: coalesced).
template <typename Point>
__device__ inline void for_rows(const grid_shape& g, int j_begin, int j_end, long long thread,
                                long long threads, Point point) {
  const long long plane = static_cast<long long>(g.plane_size());
  const long long count = plane * (j_end - j_begin);
  for (long long p = thread; p < count; p += threads) {
    const int j = j_begin + static_cast<int>(p / plane);
    const int in_plane = static_cast<int>(p % plane);
    point(in_plane % g.nx, j, in_plane / g.nx);
  }
}

__device__ inline void laplacian_rows(const grid_shape& g, const double* in, double* lap,
                                      int j_begin, int j_end, long long thread, long long threads) {
  for_rows(g, j_begin, j_end, thread, threads,
           [&](int i, int j, int k) { lap[g.index(i, j, k)] = laplacian(in, g, i, j, k); });
}

__device__ inline void flux_rows(const grid_shape& g, const double* lap, double* flx, double* fly,
                                 int j_begin, int j_end, long long thread, long long threads) {
  for_rows(g, j_begin, j_end, thread, threads, [&](int i, int j, int k) {
    flx[g.index(i, j, k)] = x_flux(lap, g, i, j, k);
    fly[g.index(i, j, k)] = y_flux(lap, g, i, j, k);
  });
}

__device__ inline void diffusion_rows(const grid_shape& g, const double* in, const double* flx,
                                      const double* fly, double* out, int j_begin, int j_end,
                                      long long thread, long long threads) {
  for_rows(g, j_begin, j_end, thread, threads, [&](int i, int j, int k) {
    out[g.index(i, j, k)] = diffused(in, flx, fly, g, i, j, k);
  });
}

// The baselines' kernels: one stage over all rows of the GPU.
__device__ inline long long global_thread() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline long long global_threads() {
  return static_cast<long long>(gridDim.x) * blockDim.x;
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
