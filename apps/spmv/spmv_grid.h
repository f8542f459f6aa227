// The process grid of the sparse matrix-vector product (thesis 5.6, figure 5.9) and of power
// iteration (5.7): P processes, one per GPU, arranged as rows x cols, rows the largest divisor of
// P that is at most sqrt(P) (1 -> 1x1, 2 -> 1x2, 4 -> 2x2, 6 -> 2x3, 9 -> 3x3). The thesis
// numbers processes down the columns: process = col * rows + row. Process (row, col) owns the
// matrix block of global rows row_range(row) and global columns col_range(col); the first row
// (row 0) holds the input vector b, piece col_range(col); the first column (col 0) receives the
// result x, piece row_range(row).
//
// A block's rows and its piece of b are shared out among the dcuda ranks of the GPU by slice():
// rank i of R owns [i * count / R, (i + 1) * count / R).
#pragma once

#include "host_device.h"

namespace spmv {

struct index_range {
  long long begin = 0;
  long long count = 0;
  APP_HD long long end() const { return begin + count; }
};

// Part i of `parts` of 0..count-1 (the same rule everywhere: blocks, vector pieces, rank slices).
APP_HD inline index_range slice(long long count, long long i, long long parts) {
  const long long begin = i * count / parts;
  return {begin, (i + 1) * count / parts - begin};
}

// The part of slice(count, ., parts) that holds index x (0 <= x < count): the largest i with
// i * count / parts <= x, which is never an empty part.
APP_HD inline long long slice_owner(long long count, long long parts, long long x) {
  return ((x + 1) * parts - 1) / count;
}

struct process_grid {
  int rows = 1;
  int cols = 1;

  APP_HD int processes() const { return rows * cols; }
  APP_HD int row_of(int process) const { return process % rows; }
  APP_HD int col_of(int process) const { return process / rows; }
  APP_HD int process_at(int row, int col) const { return col * rows + row; }
};

// rows = the largest divisor of P with rows * rows <= P.
inline process_grid grid_for(int processes) {
  int rows = 1;
  for (int d = 1; d * d <= processes; ++d)
    if (processes % d == 0) rows = d;
  return {rows, processes / rows};
}

// Where a process's block lies in the global n x n matrix. n must be a multiple of rows * cols
// (see global_size), so that every piece of b and x has the same length and the transpose of
// power iteration moves whole pieces of n / (rows * cols).
struct block_layout {
  process_grid grid;
  long long n = 0;  // global size

  APP_HD index_range row_range(int grid_row) const { return slice(n, grid_row, grid.rows); }
  APP_HD index_range col_range(int grid_col) const { return slice(n, grid_col, grid.cols); }
  APP_HD long long block_rows() const { return n / grid.rows; }
  APP_HD long long block_cols() const { return n / grid.cols; }
  APP_HD index_range rows_of(int process) const { return row_range(grid.row_of(process)); }
  APP_HD index_range cols_of(int process) const { return col_range(grid.col_of(process)); }
};

}  // namespace spmv
