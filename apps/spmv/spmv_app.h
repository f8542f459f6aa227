// What the three spmv programs share on the host: their options, the problem on P GPUs (weak
// scaling), and the result check against the CPU reference (gathered on process 0).
#pragma once

#include <cstdint>
#include <vector>

#include "options.h"
#include "mpi_process.h"
#include "spmv_grid.h"
#include "spmv_matrix.h"

namespace spmv {

// Sizes per GPU (weak scaling, spmv_matrix.h): every GPU's block has the area of an n x n block
// with row-nonzeros entries per row. Defaults: n = 262144 at the thesis's density of 0.3%
// (786 per row): 206 M nonzeros, 2.5 GB of matrix (8-byte value and 4-byte column each) read once
// per product, and as many gathers of b from the L2 cache (the vector pieces, 2 MB, stay there):
// measured about 1.6 ms per product on an H200. The thesis's block was 10816 x 10816 at the same
// density (351 K nonzeros, microseconds on an H200): ours has 24x its rows and 590x its nonzeros.
// default_threads: threads per block (baselines) or per rank (dcuda).
app_options parse_options(int argc, char** argv, const char* program, int default_threads);

struct run_setup {
  matrix_definition matrix;  // the global matrix
  block_layout layout;       // its blocks on the process grid
  long long n_block = 0;
  int block_row_nonzeros = 0;
  int iterations = 0;
  int warmup = 0;
  bool check = false;
  std::uint64_t seed = 0;
  int threads = 0;
};
run_setup setup_from(const app_options& options, int processes);

// The check's tolerance, relative to each element: every element of the product is a sum of K
// = row_nonzeros positive terms a_ij b_j (all values and b are positive), so whatever the order
// of summation (the GPU sums per lane and across the warp, per block and along the row's tree;
// the reference row by row) and with or without FMA, each result is within (K + 1) u / (1 - K u)
// of the exact sum relative to it (u = 2^-53); two such results within about twice that. The
// typical deviation is near sqrt(K) u (~1e-14).
double relative_tolerance(int row_nonzeros);

// Collective over MPI_COMM_WORLD: gathers the first column's pieces of the product (`y`, the
// block_rows values this process holds; those of other columns are ignored) on process 0,
// compares them with the CPU reference and returns the largest relative deviation everywhere.
double deviation_from_reference(const run_setup& setup, const std::vector<double>& y, int process,
                                int processes);

// The end of every version's run, collective over MPI_COMM_WORLD: with --check 1, the product
// `device_y` (device memory, block_rows values) against the CPU reference; then process 0's
// result line (the largest time of any process). Returns 1 when the check failed.
int check_and_report(const app_options& options, const run_setup& setup, const run_figures& run,
                     const double* device_y);

}  // namespace spmv
