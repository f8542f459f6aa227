// Power iteration on the CPU: the reference the GPU versions are checked against, the estimates it
// yields, and a model of the distributed algorithm (power_problem.h's six steps, every message
// split into the dcuda ranks' slices as power_dcuda.cu sends them) that the CPU tests hold
// against the reference. Built on spmv's model (spmv_reference.h) for steps 1-4.
#pragma once

#include <cstdint>
#include <vector>

#include "power_problem.h"
#include "spmv_matrix.h"
#include "spmv_reference.h"

namespace power {

using spmv::matrix_definition;

// After K iterations: b_K (not normalised: the last x) and fac_K = 1 / ||b_K||.
struct power_state {
  std::vector<double> b;
  double fac = 0;
};

// 1 / ||b||, the squares added in index order (every version starts from this fac_0).
double inverse_norm(const std::vector<double>& b);

// The start: b_0 = spmv's input vector, fac_0 = 1 / ||b_0||.
power_state initial_state(const matrix_definition& m, std::uint64_t seed);

// K iterations on the whole matrix: x_i = fac * (sum over row i in k order), squares in index
// order.
power_state reference_power(const matrix_definition& m, std::uint64_t seed, int iterations);

// for_each_transpose_segment's segments as a list, for host code that nvcc compiles (it does not
// let a host lambda be called from the __host__ __device__ walk).
std::vector<transpose_segment> transpose_segments(const block_layout& layout, int ranks,
                                                  long long begin, long long end);

// The estimates: the unit eigenvector fac * b and the eigenvalue 1 / fac.
std::vector<double> eigenvector(const power_state& state);
double eigenvalue(const power_state& state);

// Relative deviations of a result from the reference: the eigenvector's largest element
// difference over its largest element, and the eigenvalue's.
struct deviations {
  double vector = 0;
  double value = 0;
  double largest() const { return vector > value ? vector : value; }
};
deviations deviation_from(const power_state& result, const power_state& reference);

// The check's tolerance. One iteration: each x_i is a sum of K = row_nonzeros positive terms
// (spmv's bound, 2 (K + 2) u relative between two summation orders), the norm a sum of n
// positive squares (about (n + 2) u); the iteration contracts the error of earlier iterations
// (by |lambda_2 / lambda_1| < 1 in the directions other than the eigenvector; the scale is reset
// by every normalisation), so the accumulated deviation stays within a small multiple of one
// iteration's. 4 times the bound of one iteration, u = 2^-53.
double tolerance(int row_nonzeros, long long n);

// The distributed algorithm on the CPU: P processes on spmv::grid_for(P), R ranks each, K
// iterations; returns the first row's b (joined) and process 0's fac. Dropping a message (phase
// 0: b down a column, 1: the row reduction, 2: a transpose segment, 3: fac down a column, the
// norm's reduction, fac along the first row) makes it differ from the reference (tested).
power_state distributed_power(const matrix_definition& m, int processes, int ranks_per_process,
                              std::uint64_t seed, int iterations, spmv::dropped_message drop = {});

}  // namespace power
