// The device code of power iteration beyond spmv's (spmv_kernels.cuh): the product scaled by fac
// (steps 2-3, power_problem.h) and the sum of squares of step 6, for a dcuda rank's slice (its
// block's threads) or a baseline's whole piece (one block).
#pragma once

#include "spmv_kernels.cuh"

namespace power {

// The sum of x[0..count-1]^2 (or of x[0..count-1]) over the calling block (thread t adds t,
// t + threads, ...; then a tree over the threads in shared memory), returned to every thread;
// every thread must call it. Any block size up to 1024.
template <bool squares = true>
__device__ inline double block_sum_of_squares(const double* x, unsigned count) {
  __shared__ double partial[1024];
  double sum = 0;
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) sum += squares ? x[i] * x[i] : x[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned width = blockDim.x; width > 1;) {
    const unsigned half = (width + 1) / 2;
    if (threadIdx.x + half < width) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
    width = half;
  }
  const double total = partial[0];
  __syncthreads();  // the array is reused by the next call
  return total;
}

// The baselines' kernels. y = fac * (A b) over the whole block, fac read on the device (it
// arrives with b, on the stream).
__global__ void scaled_multiply_kernel(spmv::csr_view a, const double* b, const double* fac,
                                       double* y, unsigned rows) {
  spmv::multiply_rows(a, b, y, 0, rows, spmv::global_thread() / 32, spmv::global_threads() / 32,
                      *fac);
}
// The baselines' sum of x^2 in two passes, so that the whole GPU reads x: block b's sum of the
// squares of its share into partials[b], then one block adds the partials in order.
__global__ void partial_squares_kernel(const double* x, unsigned count, double* partials) {
  const unsigned share = (count + gridDim.x - 1) / gridDim.x;
  const unsigned begin = blockIdx.x * share;
  const unsigned length = begin < count ? (count - begin < share ? count - begin : share) : 0;
  const double total = block_sum_of_squares(x + begin, length);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}
__global__ void sum_partials_kernel(const double* partials, unsigned count, double* sum) {
  __shared__ double part[1024];
  double s = 0;
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) s += partials[i];
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0;
    for (unsigned t = 0; t < blockDim.x; ++t) total += part[t];
    *sum = total;
  }
}
// One thread: fac = 1 / sqrt(sum of squares).
__global__ void inverse_root_kernel(const double* squares, double* fac) {
  *fac = 1.0 / sqrt(squares[0]);
}

}  // namespace power
