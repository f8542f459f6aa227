// The three stages on the GPU, over a run of rows, the points shared out among `threads` threads
// (a dcuda rank: its block; a baseline kernel: its whole grid). Each point is one call of the
// formula in stencil_problem.h.
#pragma once

#include "even_share.h"
#include "point_walk.h"
#include "stencil_problem.h"

namespace stencil {

// Every point of a block, thread `thread` of `threads` taking every threads-th point
// (consecutive threads, consecutive x: coalesced), level by level: all of the rows at level 0,
// then at level 1, ... A point reads its field at the rows next to its own, one plane away;
// going level by level keeps what is reused between rows a few rows of one level. Going row by
// row (each row's whole plane at once), the 131 ranks of a GPU would each keep two planes in
// use, 67 MB at the default size, more than the H200's 50 MB L2, and read every value three
// times from memory (measured: 1.8x slower than the baselines). One point at a time: batches of
// four (their loads in flight together) were slower, for ranks and for the baselines' kernels.
// `width` 2 visits the first point of each pair (for_pairs).
template <typename Visit>
__device__ inline void for_rows(const grid_shape& g, point_block block, unsigned thread,
                                unsigned threads, Visit visit, unsigned width = 1) {
  point_walk p(g, block, thread, threads, width);
  if (p.keeps_column()) {
    for (; !p.done(); p.next_in_column()) visit(p.at(), p.i());
  } else {
    for (; !p.done(); p.next()) visit(p.at(), p.i());
  }
}

__device__ inline void laplacian_rows(const grid_shape& g, const double* in, double* lap,
                                      point_block b, unsigned thread, unsigned threads) {
  for_rows(g, b, thread, threads, [&](unsigned at, int i) { lap[at] = laplacian(in, g, at, i); });
}

__device__ inline void flux_rows(const grid_shape& g, const double* lap, double* flx, double* fly,
                                 point_block b, unsigned thread, unsigned threads) {
  for_rows(g, b, thread, threads, [&](unsigned at, int i) {
    flx[at] = x_flux(lap, g, at, i);
    fly[at] = y_flux(lap, g, at);
  });
}

__device__ inline void diffusion_rows(const grid_shape& g, const double* in, const double* flx,
                                      const double* fly, double* out, point_block b,
                                      unsigned thread, unsigned threads) {
  for_rows(g, b, thread, threads,
           [&](unsigned at, int i) { out[at] = diffused(in, flx, fly, g, at, i); });
}

// The same stages two neighbouring points at a time (pairs, point_walk.h; the grid must have
// them): a thread's loads of its point and of the points one plane away are 16 bytes each, and
// the neighbours in x inside the pair come from them (those outside it from west() of the first
// point and east() of the second). Half the loads, stores and walk steps per
// point, with each point's formula and its operands as the one-point stages have them.
template <typename Visit>
__device__ inline void for_pairs(const grid_shape& g, point_block block, unsigned thread,
                                 unsigned threads, Visit visit) {
  for_rows(g, block, thread, threads, visit, 2);
}

__device__ inline double2 pair_at(const double* field, unsigned at) {
  return *reinterpret_cast<const double2*>(field + at);
}
__device__ inline void store_pair(double* field, unsigned at, double first, double second) {
  *reinterpret_cast<double2*>(field + at) = make_double2(first, second);
}

__device__ inline void laplacian_pairs(const grid_shape& g, const double* in, double* lap,
                                       point_block b, unsigned thread, unsigned threads) {
  const unsigned plane = static_cast<unsigned>(g.plane_size());
  for_pairs(g, b, thread, threads, [&](unsigned at, int i) {
    const double2 centre = pair_at(in, at);
    const double west_value = west(in, g, at, i);
    const double east_value = east(in, g, at + 1, i + 1);
    const double2 south = pair_at(in, at - plane);
    const double2 north = pair_at(in, at + plane);
    store_pair(lap, at, laplacian_of(centre.x, west_value, centre.y, south.x, north.x),
               laplacian_of(centre.y, centre.x, east_value, south.y, north.y));
  });
}

__device__ inline void flux_pairs(const grid_shape& g, const double* lap, double* flx, double* fly,
                                  point_block b, unsigned thread, unsigned threads) {
  const unsigned plane = static_cast<unsigned>(g.plane_size());
  for_pairs(g, b, thread, threads, [&](unsigned at, int i) {
    const double2 centre = pair_at(lap, at);
    const double east_value = east(lap, g, at + 1, i + 1);
    const double2 north = pair_at(lap, at + plane);
    store_pair(flx, at, flux_of(centre.x, centre.y), flux_of(centre.y, east_value));
    store_pair(fly, at, flux_of(centre.x, north.x), flux_of(centre.y, north.y));
  });
}

__device__ inline void diffusion_pairs(const grid_shape& g, const double* in, const double* flx,
                                       const double* fly, double* out, point_block b,
                                       unsigned thread, unsigned threads) {
  const unsigned plane = static_cast<unsigned>(g.plane_size());
  for_pairs(g, b, thread, threads, [&](unsigned at, int i) {
    const double2 value = pair_at(in, at);
    const double2 flux_x = pair_at(flx, at);
    const double flux_x_west = west(flx, g, at, i);
    const double2 flux_y = pair_at(fly, at);
    const double2 flux_y_south = pair_at(fly, at - plane);
    store_pair(out, at, diffused_of(value.x, flux_x.x, flux_x_west, flux_y.x, flux_y_south.x),
               diffused_of(value.y, flux_x.y, flux_x.x, flux_y.y, flux_y_south.y));
  });
}

// The baselines' kernels: one stage over all rows of the GPU, every thread of the grid taking
// every (grid's threads)-th point. With blocks_own_rows (an experiment, --blocks_own_rows 1) each
// block takes a run of rows instead, its threads sharing them out as a dcuda rank's do.
struct kernel_share {
  point_block block;
  unsigned thread, threads;
};
__device__ inline kernel_share share_of(const grid_shape& g, bool blocks_own_rows) {
  if (!blocks_own_rows)
    return {{0, g.ny, 0, g.nz}, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x};
  const item_share rows =
      even_share(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x), g.ny);
  return {{rows.first, rows.end, 0, g.nz}, threadIdx.x, blockDim.x};
}

// The baselines' stages as kernels; `pairs` (--pairs 1, a grid with pairs): two points per thread
// and step, the loops of dcuda's ranks.
template <bool pairs>
__global__ void laplacian_kernel(grid_shape g, bool blocks_own_rows, const double* in,
                                 double* lap) {
  const kernel_share share = share_of(g, blocks_own_rows);
  if constexpr (pairs) {
    laplacian_pairs(g, in, lap, share.block, share.thread, share.threads);
  } else {
    laplacian_rows(g, in, lap, share.block, share.thread, share.threads);
  }
}
template <bool pairs>
__global__ void flux_kernel(grid_shape g, bool blocks_own_rows, const double* lap, double* flx,
                            double* fly) {
  const kernel_share share = share_of(g, blocks_own_rows);
  if constexpr (pairs) {
    flux_pairs(g, lap, flx, fly, share.block, share.thread, share.threads);
  } else {
    flux_rows(g, lap, flx, fly, share.block, share.thread, share.threads);
  }
}
template <bool pairs>
__global__ void diffusion_kernel(grid_shape g, bool blocks_own_rows, const double* in,
                                 const double* flx, const double* fly, double* out) {
  const kernel_share share = share_of(g, blocks_own_rows);
  if constexpr (pairs) {
    diffusion_pairs(g, in, flx, fly, out, share.block, share.thread, share.threads);
  } else {
    diffusion_rows(g, in, flx, fly, out, share.block, share.thread, share.threads);
  }
}

}  // namespace stencil
