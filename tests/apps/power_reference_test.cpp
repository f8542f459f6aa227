// The power-iteration case study's CPU side: the reference finds a known eigenvalue, the
// transpose's segments move every element once, and the distributed algorithm's model (the six
// steps, every message split into rank slices as power_dcuda.cu sends them) equals the reference
// and differs from it when one message is dropped.
#include <cmath>
#include <vector>

#include "power_reference.h"
#include "spmv_grid.h"
#include "test_main.h"

using namespace power;

namespace {

matrix_definition model_matrix(int processes) {
  const spmv::process_grid grid = spmv::grid_for(processes);
  return spmv::weak_scaled_matrix(36, 12, processes, grid.rows, grid.cols, 11);
}

}  // namespace

DCUDA_TEST(power_reference_finds_the_row_sum_of_a_matrix_with_constant_row_sums) {
  // Every value 1: every row sums to K, so A 1 = K 1 and K is the dominant eigenvalue of the
  // nonnegative matrix (Perron-Frobenius), with the eigenvector 1 / sqrt(n).
  matrix_definition m;
  m.n = 500;
  m.row_nonzeros = 16;
  m.seed = 7;
  m.unit_values = true;
  const power_state state = reference_power(m, 3, 60);
  DCUDA_CHECK(std::fabs(eigenvalue(state) - 16.0) < 1e-9 * 16.0);
  for (double v : eigenvector(state)) DCUDA_CHECK(std::fabs(v - 1.0 / std::sqrt(500.0)) < 1e-9);
  // And with random positive values the estimate settles: the last iterations agree.
  m.unit_values = false;
  const double late = eigenvalue(reference_power(m, 3, 40));
  DCUDA_CHECK(std::fabs(eigenvalue(reference_power(m, 3, 41)) - late) < 1e-12 * late);
  DCUDA_CHECK(late > 0.0);
}

DCUDA_TEST(power_reference_starts_from_the_normalised_input) {
  matrix_definition m;
  m.n = 20;
  m.row_nonzeros = 4;
  const power_state start = reference_power(m, 9, 0);
  double squares = 0;
  for (double v : eigenvector(start)) squares += v * v;
  DCUDA_CHECK(std::fabs(squares - 1.0) < 1e-15);
  DCUDA_CHECK_EQ(start.b[3], spmv::vector_value(9, 3));
}

DCUDA_TEST(power_transpose_segments_move_every_element_once) {
  for (int processes : {1, 2, 3, 4, 6, 8, 9})
    for (int ranks : {1, 2, 3, 5}) {
      const spmv::process_grid grid = spmv::grid_for(processes);
      const matrix_definition m =
          spmv::weak_scaled_matrix(40, 4, processes, grid.rows, grid.cols, 1);
      const block_layout layout{grid, m.n};
      std::vector<int> moved(static_cast<std::size_t>(m.n), 0);
      std::vector<int> received_segments(static_cast<std::size_t>(processes * ranks), 0);
      for (int row = 0; row < grid.rows; ++row)
        for (int rank = 0; rank < ranks; ++rank) {
          const int source = grid.process_at(row, 0);
          const index_range mine = x_slice(layout, source, rank, ranks);
          for_each_transpose_segment(
              layout, ranks, mine.begin, mine.end(), [&](const transpose_segment& s) {
                DCUDA_CHECK_EQ(s.source_process, source);
                DCUDA_CHECK_EQ(s.source_rank, rank);
                DCUDA_CHECK(s.count > 0);
                const index_range target = b_slice(layout, s.target_process, s.target_rank, ranks);
                DCUDA_CHECK(s.global_begin >= target.begin);
                DCUDA_CHECK(s.global_begin + s.count <= target.end());
                DCUDA_CHECK_EQ(grid.row_of(s.target_process), 0);
                for (long long i = 0; i < s.count; ++i) ++moved[s.global_begin + i];
                ++received_segments[s.target_process * ranks + s.target_rank];
              });
        }
      for (int count : moved) DCUDA_CHECK_EQ(count, 1);
      // The receiver's walk over its b slice counts the same segments (its wait count).
      for (int col = 0; col < grid.cols; ++col)
        for (int rank = 0; rank < ranks; ++rank) {
          const int target = grid.process_at(0, col);
          const index_range mine = b_slice(layout, target, rank, ranks);
          int segments = 0;
          for_each_transpose_segment(layout, ranks, mine.begin, mine.end(),
                                     [&](const transpose_segment& s) {
                                       DCUDA_CHECK_EQ(s.target_process, target);
                                       DCUDA_CHECK_EQ(s.target_rank, rank);
                                       ++segments;
                                     });
          DCUDA_CHECK_EQ(segments, received_segments[target * ranks + rank]);
        }
      // Square grids move whole slices rank i to rank i: one segment each.
      if (grid.rows == grid.cols)
        for (int count : received_segments) DCUDA_CHECK(count <= 1);
    }
}

DCUDA_TEST(power_distributed_model_equals_the_reference_for_1_2_4_6_9_processes) {
  for (int processes : {1, 2, 4, 6, 9})
    for (int ranks : {1, 3}) {
      const matrix_definition m = model_matrix(processes);
      const power_state expected = reference_power(m, 5, 6);
      const power_state result = distributed_power(m, processes, ranks, 5, 6);
      DCUDA_CHECK(deviation_from(result, expected).largest() <= tolerance(m.row_nonzeros, m.n));
    }
}

DCUDA_TEST(power_distributed_model_without_one_message_differs_from_the_reference) {
  for (int processes : {2, 4, 6}) {
    const matrix_definition m = model_matrix(processes);
    const int iterations = 2, ranks = 2;
    const power_state expected = reference_power(m, 5, iterations);
    // Drop, one at a time, each message of the first iteration, phase by phase.
    const spmv::process_grid grid = spmv::grid_for(processes);
    const int per_iteration[4] = {
        (grid.rows - 1) * grid.cols * ranks,  // b slices down the columns
        (grid.cols - 1) * grid.rows * ranks,  // partial sums along the rows
        1,                                    // transpose segments: at least one; drop the first
        (grid.rows - 1) * grid.cols + (grid.rows - 1) + (grid.cols - 1)};  // fac, norm, fac
    for (int phase = 0; phase < 4; ++phase)
      for (int index = 0; index < per_iteration[phase]; ++index) {
        const power_state result =
            distributed_power(m, processes, ranks, 5, iterations, {phase, index});
        DCUDA_CHECK(deviation_from(result, expected).largest() > 1e-6);
      }
    DCUDA_CHECK(
        deviation_from(distributed_power(m, processes, ranks, 5, iterations), expected).largest() <=
        tolerance(m.row_nonzeros, m.n));
  }
}
