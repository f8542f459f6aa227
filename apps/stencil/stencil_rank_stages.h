// The three stages of a dcuda stencil rank (stencil_dcuda.cu), compiled in a translation unit of
// their own and linked by separate compilation (-rdc).
//
// Why: inside the persistent kernel ptxas allocates registers for the kernel and everything it
// calls at once, and at two ranks per SM (32 registers a thread) it left the point loops about 20
// vector registers, so they spilled 13-22 local accesses per point
// (bench/results/h200x2/experiments/stencil-registers-static/). Compiled here, with the same
// register limit, the loops get the whole budget. Everything the loops keep apart from their
// position comes from the constant bank and blockIdx, which are uniform, as in the baselines'
// kernels. This leaves them their vector registers.
//
// The rank's rows follow from its block: rank blockIdx.x of `ranks` owns rows
// even_share(rank, ranks, ny), the share place_in_line gives it
// (apps/common/rank_line.cuh; docs/api.md: the DCUDA_COMM_DEVICE rank is blockIdx.x).
#pragma once

#include "stencil_problem.h"

namespace stencil {

// What the stages read, the same for every rank of the GPU (set before the kernel runs).
struct rank_stage_data {
  grid_shape g;      // with its x-neighbours: the stages read the x-halos that have one
  double* field[2];  // in and out alternate by iteration parity
  double* lap;
  double* flx;
  double* fly;
  int ranks;  // of this GPU
};

// Host: copies `data` into the stages' constant memory (cudaMemcpyToSymbol), on the current GPU.
void set_rank_stage_data(const rank_stage_data& data);

// Device, called by every thread of a rank: the stage at levels k_begin..k_end-1 of the rank's
// rows. `now` is the iteration's parity: the stages read field[now], the last writes
// field[now ^ 1].
__device__ void rank_laplacian(int now, int k_begin, int k_end);
__device__ void rank_flux(int k_begin, int k_end);
__device__ void rank_diffusion(int now, int k_begin, int k_end);

}  // namespace stencil
