// The spmv case study on the CPU: a block of the matrix in CSR (what each process builds), the
// reference product the GPU versions are checked against, and a model of the distributed
// algorithm (thesis 5.6) that the CPU tests hold against the reference: b broadcast down the
// columns, a product per block, the partial results reduced along the rows to the first column,
// every message split into the slices of the dcuda ranks (rank i of one GPU to rank i of the
// next), as spmv_dcuda.cu sends them.
#pragma once

#include <cstdint>
#include <vector>

#include "spmv_grid.h"
#include "spmv_matrix.h"
#include "spmv_tree.h"

namespace spmv {

// One block in CSR: rows of the block (local numbering), columns local to the block (32 bits),
// entries of a row in the generator's k order. row_offsets has rows + 1 elements.
struct block_csr {
  long long rows = 0, cols = 0;
  std::vector<unsigned> row_offsets;
  std::vector<int> columns;
  std::vector<double> values;
};

// Entries of global row `row` in the columns `cols` (in k order), as (local column, value).
// The GPU generator (spmv_kernels.cuh) filters the same way.
template <typename Visit>
APP_HD inline void for_each_entry_in(const matrix_definition& m, long long row, index_range cols,
                                     Visit visit) {
  for (int k = 0; k < m.row_nonzeros; ++k) {
    const long long column = entry_column(m, row, k);
    if (column >= cols.begin && column < cols.end())
      visit(static_cast<int>(column - cols.begin), entry_value(m, row, k));
  }
}

// The block of global rows `rows` and columns `cols`.
block_csr make_block(const matrix_definition& m, index_range rows, index_range cols);

// y = scale * (A b) for rows first..first+count-1 of a block (y indexed from 0 for row first),
// each row's entries added in order (scale: power iteration's normalisation; 1 for spmv).
void multiply_rows(const block_csr& a, const double* b, double* y, long long first, long long count,
                   double scale = 1.0);

// The input vector b of length n.
std::vector<double> input_vector(std::uint64_t seed, long long n);

// The reference: y = A b over the whole matrix, row by row in k order.
std::vector<double> reference_product(const matrix_definition& m, const std::vector<double>& b);

// The same as a dense matrix, for tiny n (tests).
std::vector<std::vector<double>> dense_matrix(const matrix_definition& m);

// Which message of the model not to deliver: the index-th slice message of the broadcasts
// (phase 0) or of the reductions (phase 1), counted in the order the model sends them; -1: none.
// (Power iteration's model adds phases 2 and 3: its transposes and its norm and fac messages.)
struct dropped_message {
  int phase = -1;
  int index = -1;
};

// The distributed algorithm on the CPU, step by step, so that power iteration's model
// (power_reference.h) runs the same steps. Process p of grid_for(P) holds its block, its
// column's piece of b and its row's piece of the partial result; every message is split into the
// slices of R ranks per process (rank i sends slice i to rank i of the other process).
struct process_state {
  block_csr a;
  std::vector<double> b;  // the piece col_range(col) of b (block_cols); zero until it arrives
  std::vector<double> y;  // A_block b, then (first column) the row's sum: piece row_range(row)
  double fac = 1.0;       // the factor of the product (power iteration's normalisation)
};
struct distributed_model {
  block_layout layout;
  int ranks = 1;
  std::vector<process_state> processes;
  dropped_message drop;
  static constexpr int phases = 4;
  int sent[phases] = {0, 0, 0, 0};  // slice messages sent so far, per phase

  // Whether the next slice message of `phase` is delivered (counts it).
  bool deliver(int phase);
  // b of the first row down every column (binomial broadcast, per rank slice).
  void broadcast_b();
  // y = A_block b on every process.
  void multiply_blocks();
  // y along every row to the first column (binomial reduction, per rank slice).
  void reduce_rows();
  // The first column's pieces of y joined: the product, length n.
  std::vector<double> first_column_result() const;
};

// P processes on grid_for(P), R ranks each; b (length m.n) given to the first row.
distributed_model make_model(const matrix_definition& m, int processes, int ranks_per_process,
                             const std::vector<double>& b, dropped_message drop = {});

// One product with the model: broadcast, multiply, reduce. With every message it equals
// reference_product up to summation order; one message dropped makes it differ (tested).
std::vector<double> distributed_product(const matrix_definition& m, int processes,
                                        int ranks_per_process, const std::vector<double>& b,
                                        dropped_message drop = {});

// Largest |a_i - b_i| / |reference_i| (reference elements are positive in this application).
double max_relative_difference(const std::vector<double>& a, const std::vector<double>& reference);

}  // namespace spmv
