#include "stencil_rank_stages.h"

#include <stdexcept>
#include <string>

#include "stencil_kernels.cuh"

namespace stencil {
namespace {

// A byte array, because __constant__ variables may not have constructors (grid_shape's members
// have default values).
__constant__ alignas(8) unsigned char stage_data_bytes[sizeof(rank_stage_data)];

__device__ __forceinline__ const rank_stage_data& stage_data() {
  return *reinterpret_cast<const rank_stage_data*>(stage_data_bytes);
}

__device__ __forceinline__ point_block rank_block(int k_begin, int k_end) {
  const item_share rows =
      even_share(static_cast<int>(blockIdx.x), stage_data().ranks, stage_data().g.ny);
  return {rows.first, rows.end, k_begin, k_end};
}

// Two points per thread and step where the grid has pairs (stencil_kernels.cuh); the CMake
// variable STENCIL_PAIRS=OFF builds the one-point loops only (the A/B of docs/case-studies.md).
__device__ __forceinline__ bool paired(const grid_shape& g) {
#if STENCIL_PAIRS
  return has_pairs(g);
#else
  (void)g;
  return false;
#endif
}

}  // namespace

void set_rank_stage_data(const rank_stage_data& data) {
  const cudaError_t status = cudaMemcpyToSymbol(stage_data_bytes, &data, sizeof data);
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("cudaMemcpyToSymbol (stencil rank stages): ") +
                             cudaGetErrorString(status));
}

__device__ void rank_laplacian(int now, int k_begin, int k_end) {
  const rank_stage_data& d = stage_data();
  if (paired(d.g))
    laplacian_pairs(d.g, d.field[now], d.lap, rank_block(k_begin, k_end), threadIdx.x, blockDim.x);
  else
    laplacian_rows(d.g, d.field[now], d.lap, rank_block(k_begin, k_end), threadIdx.x, blockDim.x);
}

__device__ void rank_flux(int k_begin, int k_end) {
  const rank_stage_data& d = stage_data();
  if (paired(d.g))
    flux_pairs(d.g, d.lap, d.flx, d.fly, rank_block(k_begin, k_end), threadIdx.x, blockDim.x);
  else
    flux_rows(d.g, d.lap, d.flx, d.fly, rank_block(k_begin, k_end), threadIdx.x, blockDim.x);
}

__device__ void rank_diffusion(int now, int k_begin, int k_end) {
  const rank_stage_data& d = stage_data();
  if (paired(d.g))
    diffusion_pairs(d.g, d.field[now], d.flx, d.fly, d.field[now ^ 1], rank_block(k_begin, k_end),
                    threadIdx.x, blockDim.x);
  else
    diffusion_rows(d.g, d.field[now], d.flx, d.fly, d.field[now ^ 1], rank_block(k_begin, k_end),
                   threadIdx.x, blockDim.x);
}

}  // namespace stencil
