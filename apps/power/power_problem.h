// The power-iteration case study (thesis 5.7): the dominant eigenvector of spmv's matrix
// (apps/spmv/spmv_matrix.h: positive entries, so a simple dominant eigenvalue with a positive
// eigenvector), on spmv's process grid (spmv_grid.h). Iteration k, starting from b_0 (spmv's
// input vector) and fac_0 = 1 / ||b_0||:
//
//   1. b_k (on the first row) and fac_k go down every column (binomial broadcast);
//   2. normalise: b_k * fac_k;
//   3. x = A (fac_k b_k) per block;
//   4. the partial x along every row to the first column (binomial reduction);
//   5. transpose: the first column's pieces of x become the first row's pieces of b_{k+1}
//      (a general redistribution when rows != cols: segment by segment, below);
//   6. fac_{k+1} = 1 / ||x||: squares summed on the first column, reduced to process 0, which
//      takes the root and sends fac_{k+1} along the first row.
//
// Steps 2 and 3 are one: every version computes x_i = fac_k * (sum_j a_ij b_j), A (fac b) =
// fac (A b), one multiplication per row instead of per element of b. In dcuda a rank then needs
// fac only after the device barrier that completes b (power_dcuda.cu), so fac travels leader to
// leader, one value per GPU, instead of to every rank. After K iterations the estimates are the
// eigenvector fac_K b_K (unit length) and the eigenvalue 1 / fac_K = ||A (fac b_{K-1})||.
#pragma once

#include "host_device.h"
#include "spmv_grid.h"

namespace power {

using spmv::block_layout;
using spmv::index_range;

// One piece of the transpose (step 5): global elements global_begin..+count of x go from rank
// source_rank of process source_process (first column) to rank target_rank of target_process
// (first row). A rank's part of x or b is its slice of the process's piece (spmv::slice), so a
// piece of x meets the pieces of b in segments where neither side's slice changes. With one
// rank per process these are the processes' messages (the baselines').
struct transpose_segment {
  long long global_begin = 0;
  long long count = 0;
  int source_process = 0, source_rank = 0;
  int target_process = 0, target_rank = 0;
};

// Visits, in order, the segments of global elements [begin, end) (a rank's slice of x, seen by
// its sender, or a rank's slice of b, seen by its receiver: both walks give the same segments).
template <typename Visit>
APP_HD inline void for_each_transpose_segment(const block_layout& layout, int ranks,
                                              long long begin, long long end, Visit visit) {
  const long long rows = layout.block_rows(), cols = layout.block_cols();
  for (long long x = begin; x < end;) {
    const int grid_row = static_cast<int>(x / rows), grid_col = static_cast<int>(x / cols);
    const long long in_row = x - grid_row * rows, in_col = x - grid_col * cols;
    const int source_rank = static_cast<int>(spmv::slice_owner(rows, ranks, in_row));
    const int target_rank = static_cast<int>(spmv::slice_owner(cols, ranks, in_col));
    const long long source_end = grid_row * rows + spmv::slice(rows, source_rank, ranks).end();
    const long long target_end = grid_col * cols + spmv::slice(cols, target_rank, ranks).end();
    long long segment_end = source_end < target_end ? source_end : target_end;
    if (segment_end > end) segment_end = end;
    transpose_segment segment;
    segment.global_begin = x;
    segment.count = segment_end - x;
    segment.source_process = layout.grid.process_at(grid_row, 0);
    segment.source_rank = source_rank;
    segment.target_process = layout.grid.process_at(0, grid_col);
    segment.target_rank = target_rank;
    visit(segment);
    x = segment_end;
  }
}

// Rank `rank`'s slice of process `process`'s piece of x (first column) or of b (first row), as
// global elements.
APP_HD inline index_range x_slice(const block_layout& layout, int process, int rank, int ranks) {
  const index_range part = spmv::slice(layout.block_rows(), rank, ranks);
  return {layout.rows_of(process).begin + part.begin, part.count};
}
APP_HD inline index_range b_slice(const block_layout& layout, int process, int rank, int ranks) {
  const index_range part = spmv::slice(layout.block_cols(), rank, ranks);
  return {layout.cols_of(process).begin + part.begin, part.count};
}

}  // namespace power
