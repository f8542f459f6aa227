// The sparse matrix of the spmv and power-iteration case studies, defined by hashing so that any
// process (or the CPU reference) can make any part of it without a global generator: global row
// i has `row_nonzeros` entries k = 0..row_nonzeros-1, entry k at column entry_column(i, k) (hashed
// over the whole n columns) with value entry_value(i, k) in (0, 1]. Two entries of a row may fall
// on the same column; the matrix element is then their sum (CSR keeps both, every product adds
// both). A process keeps the entries of its rows that fall in its columns (filtering), in k order.
//
// All values are positive, and so is the input vector: by Perron-Frobenius the matrix has a
// simple dominant eigenvalue with a positive eigenvector (the random sparsity makes it irreducible
// and primitive with overwhelming probability), so power iteration converges; and every product
// is a sum of positive terms, which bounds its rounding error by the sum itself (spmv_app.h,
// tolerance). With unit_values every value is 1: every row sums to row_nonzeros, which is then
// the dominant eigenvalue (a CPU test of power iteration).
#pragma once

#include <cmath>
#include <cstdint>

#include "host_device.h"

namespace spmv {

struct matrix_definition {
  long long n = 0;       // global rows and columns
  int row_nonzeros = 0;  // entries per global row
  std::uint64_t seed = 0;
  bool unit_values = false;
};

// splitmix64's finaliser: every input bit moves every output bit.
APP_HD inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

APP_HD inline std::uint64_t entry_hash(const matrix_definition& m, long long row, int k,
                                       std::uint64_t purpose) {
  return mix(m.seed ^ (static_cast<std::uint64_t>(row) * 0x9E3779B97F4A7C15ull) ^
             (static_cast<std::uint64_t>(k) * 0xC2B2AE3D27D4EB4Full) ^
             (purpose * 0x165667B19E3779F9ull));
}

// 53 random bits -> (0, 1].
APP_HD inline double unit_interval(std::uint64_t h) {
  return static_cast<double>((h >> 11) + 1) * (1.0 / 9007199254740992.0);
}

// Column of entry k of global row `row`: the hash's high 32 bits scaled to 0..n-1 (n < 2^32).
APP_HD inline long long entry_column(const matrix_definition& m, long long row, int k) {
  const std::uint64_t h = entry_hash(m, row, k, 1) >> 32;
  return static_cast<long long>((h * static_cast<std::uint64_t>(m.n)) >> 32);
}

APP_HD inline double entry_value(const matrix_definition& m, long long row, int k) {
  return m.unit_values ? 1.0 : unit_interval(entry_hash(m, row, k, 2));
}

// The input vector (spmv's b, power iteration's b0): element i in (0, 1].
APP_HD inline double vector_value(std::uint64_t seed, long long i) {
  return unit_interval(
      mix(seed ^ 0x5851F42D4C957F2Dull ^ (static_cast<std::uint64_t>(i) * 0xD6E8FEB86659FD93ull)));
}

// Weak scaling: a GPU's block has the area and nonzeros of an n_block x n_block block with
// block_row_nonzeros entries per row (density block_row_nonzeros / n_block), whatever P. The
// global matrix is therefore n = n_block * sqrt(P), rounded to a multiple of rows * cols (the
// grid, spmv_grid.h), at the same density: row_nonzeros = block_row_nonzeros * n / n_block.
inline matrix_definition weak_scaled_matrix(long long n_block, int block_row_nonzeros,
                                            int processes, int grid_rows, int grid_cols,
                                            std::uint64_t seed) {
  const long long unit = static_cast<long long>(grid_rows) * grid_cols;
  const double ideal = static_cast<double>(n_block) * std::sqrt(static_cast<double>(processes));
  long long n = static_cast<long long>(ideal / static_cast<double>(unit) + 0.5) * unit;
  if (n < unit) n = unit;
  matrix_definition m;
  m.n = n;
  m.row_nonzeros = static_cast<int>(static_cast<double>(block_row_nonzeros) *
                                        static_cast<double>(n) / static_cast<double>(n_block) +
                                    0.5);
  if (m.row_nonzeros < 1) m.row_nonzeros = 1;
  m.seed = seed;
  return m;
}

}  // namespace spmv
