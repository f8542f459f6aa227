// The spmv case study's CPU side: the process grid, the binomial trees, the matrix generator, the
// reference product against a dense one, and the distributed algorithm's model (the messages
// every version sends: b down the columns, partial sums along the rows, per rank slice) against
// the reference.
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "spmv_app.h"
#include "spmv_reference.h"
#include "test_main.h"

using namespace spmv;

DCUDA_TEST(spmv_process_grid_is_the_squarest_for_1_to_16) {
  for (int p = 1; p <= 16; ++p) {
    const process_grid grid = grid_for(p);
    DCUDA_CHECK_EQ(grid.processes(), p);
    DCUDA_CHECK(grid.rows <= grid.cols);
    for (int d = grid.rows + 1; d * d <= p; ++d) DCUDA_CHECK(p % d != 0);  // rows is the largest
    std::set<int> numbers;
    for (int row = 0; row < grid.rows; ++row)
      for (int col = 0; col < grid.cols; ++col) {
        const int process = grid.process_at(row, col);
        DCUDA_CHECK_EQ(process, col * grid.rows + row);  // the thesis's numbering
        DCUDA_CHECK_EQ(grid.row_of(process), row);
        DCUDA_CHECK_EQ(grid.col_of(process), col);
        numbers.insert(process);
      }
    DCUDA_CHECK_EQ(numbers.size(), static_cast<std::size_t>(p));
  }
  DCUDA_CHECK_EQ(grid_for(1).cols, 1);
  DCUDA_CHECK_EQ(grid_for(2).rows, 1);
  DCUDA_CHECK_EQ(grid_for(2).cols, 2);
  DCUDA_CHECK_EQ(grid_for(4).rows, 2);
  DCUDA_CHECK_EQ(grid_for(6).rows, 2);
  DCUDA_CHECK_EQ(grid_for(9).rows, 3);
  DCUDA_CHECK_EQ(grid_for(12).rows, 3);
  DCUDA_CHECK_EQ(grid_for(7).rows, 1);
}

DCUDA_TEST(spmv_slices_cover_every_index_once) {
  for (long long count : {0ll, 1ll, 5ll, 16ll, 100ll})
    for (long long parts : {1ll, 3ll, 16ll}) {
      long long next = 0;
      for (long long i = 0; i < parts; ++i) {
        const index_range part = slice(count, i, parts);
        DCUDA_CHECK_EQ(part.begin, next);
        DCUDA_CHECK(part.count >= count / parts && part.count <= count / parts + 1);
        next = part.end();
      }
      DCUDA_CHECK_EQ(next, count);
    }
}

DCUDA_TEST(spmv_broadcast_reaches_every_member_exactly_once_for_1_to_9) {
  for (int count = 1; count <= 9; ++count) {
    std::vector<int> received(count, 0);
    std::vector<int> has_round(count, -1);  // the round after which a member holds the data
    has_round[0] = -1;
    std::vector<bool> holds(count, false);
    holds[0] = true;
    int previous_round = 0;
    for (const tree_message& m : broadcast_schedule(count)) {
      DCUDA_CHECK(m.round >= previous_round);
      previous_round = m.round;
      DCUDA_CHECK(holds[m.from]);                // a sender has it already...
      DCUDA_CHECK(has_round[m.from] < m.round);  // ...from an earlier round
      DCUDA_CHECK(m.to > 0 && m.to < count);
      DCUDA_CHECK_EQ(broadcast_parent(m.to), m.from);  // the device code's view agrees
      DCUDA_CHECK_EQ(m.round, log2_of(m.to - m.from));
      DCUDA_CHECK(m.to - m.from >= broadcast_first_step(m.from));
      ++received[m.to];
      holds[m.to] = true;
      has_round[m.to] = m.round;
    }
    DCUDA_CHECK_EQ(received[0], 0);
    for (int member = 1; member < count; ++member) DCUDA_CHECK_EQ(received[member], 1);
    DCUDA_CHECK(static_cast<int>(broadcast_schedule(count).size()) == count - 1);
    if (count > 1) DCUDA_CHECK_EQ(previous_round, tree_rounds(count) - 1);
  }
}

DCUDA_TEST(spmv_reduction_sums_every_contribution_exactly_once_for_1_to_9) {
  for (int count = 1; count <= 9; ++count) {
    // What each member's partial sum contains: member -> how often.
    std::vector<std::map<int, int>> sums(count);
    for (int member = 0; member < count; ++member) sums[member][member] = 1;
    std::vector<bool> sent(count, false);
    int previous_round = 0;
    for (const tree_message& m : reduction_schedule(count)) {
      DCUDA_CHECK(m.round >= previous_round);
      previous_round = m.round;
      DCUDA_CHECK(!sent[m.from] && !sent[m.to]);  // nobody adds after it has sent
      DCUDA_CHECK_EQ(reduction_parent(m.from), m.to);
      DCUDA_CHECK_EQ(reduction_send_round(m.from), m.round);
      DCUDA_CHECK(reduction_receives(m.to, m.from - m.to, count));
      for (const auto& [member, times] : sums[m.from]) sums[m.to][member] += times;
      sent[m.from] = true;
    }
    for (int member = 0; member < count; ++member) {
      DCUDA_CHECK_EQ(sums[0][member], 1);
      DCUDA_CHECK_EQ(static_cast<bool>(sent[member]), member != 0);
    }
    // The device loop (reduction_has_step / reduction_receives) finds the same children.
    for (int member = 0; member < count; ++member) {
      int children = 0;
      for (int step = 1; reduction_has_step(member, step, count); step *= 2)
        children += reduction_receives(member, step, count);
      int expected = 0;
      for (const tree_message& m : reduction_schedule(count)) expected += m.to == member;
      DCUDA_CHECK_EQ(children, expected);
    }
  }
}

DCUDA_TEST(spmv_generator_is_deterministic_with_fixed_nonzeros_per_row) {
  matrix_definition m;
  m.n = 999;
  m.row_nonzeros = 37;
  m.seed = 42;
  std::set<long long> columns_seen;
  for (long long row = 0; row < m.n; row += 97)
    for (int k = 0; k < m.row_nonzeros; ++k) {
      const long long column = entry_column(m, row, k);
      DCUDA_CHECK(column >= 0 && column < m.n);
      DCUDA_CHECK_EQ(column, entry_column(m, row, k));
      const double value = entry_value(m, row, k);
      DCUDA_CHECK(value > 0.0 && value <= 1.0);
      DCUDA_CHECK_EQ(value, entry_value(m, row, k));
      columns_seen.insert(column);
    }
  DCUDA_CHECK(columns_seen.size() > 300);  // spread over the columns
  matrix_definition other = m;
  other.seed = 43;
  DCUDA_CHECK(entry_column(m, 5, 3) != entry_column(other, 5, 3) ||
              entry_value(m, 5, 3) != entry_value(other, 5, 3));
  // The blocks of a row, split over 3 column ranges, hold its row_nonzeros entries together.
  const block_layout layout{{1, 3}, m.n};
  std::vector<block_csr> blocks;
  for (int col = 0; col < 3; ++col) blocks.push_back(make_block(m, {0, 40}, layout.col_range(col)));
  for (int r = 0; r < 40; ++r) {
    unsigned entries = 0;
    for (const block_csr& block : blocks) {
      entries += block.row_offsets[r + 1] - block.row_offsets[r];
      for (unsigned e = block.row_offsets[r]; e < block.row_offsets[r + 1]; ++e)
        DCUDA_CHECK(block.columns[e] >= 0 && block.columns[e] < block.cols);
    }
    DCUDA_CHECK_EQ(entries, static_cast<unsigned>(m.row_nonzeros));
  }
  for (long long i = 0; i < 50; ++i) {
    const double v = vector_value(42, i);
    DCUDA_CHECK(v > 0.0 && v <= 1.0);
    DCUDA_CHECK(v != vector_value(43, i));
  }
}

DCUDA_TEST(spmv_weak_scaling_keeps_block_area_and_nonzeros) {
  const long long n_block = 1000;
  const int block_row_nonzeros = 30;
  for (int p : {1, 2, 3, 4, 6, 8, 9, 16}) {
    const process_grid grid = grid_for(p);
    const matrix_definition m =
        weak_scaled_matrix(n_block, block_row_nonzeros, p, grid.rows, grid.cols, 1);
    DCUDA_CHECK_EQ(m.n % (grid.rows * grid.cols), 0ll);
    const double area = static_cast<double>(m.n / grid.rows) * static_cast<double>(m.n / grid.cols);
    DCUDA_CHECK(std::fabs(area / (n_block * n_block) - 1.0) < 0.02);
    const double block_nonzeros = static_cast<double>(m.n / grid.rows) * m.row_nonzeros / grid.cols;
    DCUDA_CHECK(std::fabs(block_nonzeros / (n_block * block_row_nonzeros) - 1.0) < 0.03);
  }
  DCUDA_CHECK_EQ(weak_scaled_matrix(1000, 30, 1, 1, 1, 1).n, 1000ll);
  DCUDA_CHECK_EQ(weak_scaled_matrix(1000, 30, 4, 2, 2, 1).n, 2000ll);
  DCUDA_CHECK_EQ(weak_scaled_matrix(1000, 30, 4, 2, 2, 1).row_nonzeros, 60);
}

DCUDA_TEST(spmv_reference_equals_a_dense_product_on_a_tiny_matrix) {
  matrix_definition m;
  m.n = 7;
  m.row_nonzeros = 5;  // 5 of 7 columns: some rows hit a column twice
  m.seed = 3;
  const auto dense = dense_matrix(m);
  const auto b = input_vector(9, m.n);
  const auto y = reference_product(m, b);
  bool some_duplicate = false;
  for (long long row = 0; row < m.n; ++row) {
    double expected = 0;
    int nonzero_columns = 0;
    for (long long col = 0; col < m.n; ++col) {
      expected += dense[row][col] * b[col];
      nonzero_columns += dense[row][col] != 0.0;
    }
    some_duplicate |= nonzero_columns < m.row_nonzeros;
    DCUDA_CHECK(std::fabs(y[row] - expected) <= 1e-15 * expected);
  }
  DCUDA_CHECK(some_duplicate);  // the case the CSR must handle (both entries added) is covered
  // One block holding the whole matrix gives the same product, row by row in the same order.
  const block_csr whole = make_block(m, {0, m.n}, {0, m.n});
  std::vector<double> from_block(static_cast<std::size_t>(m.n));
  multiply_rows(whole, b.data(), from_block.data(), 0, m.n);
  for (long long row = 0; row < m.n; ++row) DCUDA_CHECK_EQ(from_block[row], y[row]);
}

namespace {

matrix_definition model_matrix(int processes) {
  const process_grid grid = grid_for(processes);
  return weak_scaled_matrix(36, 12, processes, grid.rows, grid.cols, 11);
}

}  // namespace

DCUDA_TEST(spmv_distributed_model_equals_the_reference_for_1_2_4_6_9_processes) {
  for (int processes : {1, 2, 4, 6, 9})
    for (int ranks : {1, 3, 4}) {
      const matrix_definition m = model_matrix(processes);
      const auto b = input_vector(5, m.n);
      const auto expected = reference_product(m, b);
      const auto x = distributed_product(m, processes, ranks, b);
      DCUDA_CHECK(max_relative_difference(x, expected) <= relative_tolerance(m.row_nonzeros));
    }
}

DCUDA_TEST(spmv_distributed_model_without_one_message_differs_from_the_reference) {
  for (int processes : {2, 4, 6, 9}) {
    const matrix_definition m = model_matrix(processes);
    const auto b = input_vector(5, m.n);
    const auto expected = reference_product(m, b);
    const process_grid grid = grid_for(processes);
    const int ranks = 2;
    // Slice messages: broadcasts (rows - 1 per column), reductions (cols - 1 per row).
    const int broadcasts = (grid.rows - 1) * grid.cols * ranks;
    const int reductions = (grid.cols - 1) * grid.rows * ranks;
    for (int index = 0; index < broadcasts; ++index)
      DCUDA_CHECK(max_relative_difference(distributed_product(m, processes, ranks, b, {0, index}),
                                          expected) > 1e-3);
    for (int index = 0; index < reductions; ++index)
      DCUDA_CHECK(max_relative_difference(distributed_product(m, processes, ranks, b, {1, index}),
                                          expected) > 1e-3);
    DCUDA_CHECK(broadcasts + reductions > 0);
  }
}

DCUDA_TEST(spmv_tolerance_bounds_the_summation_orders) {
  // The tolerance grows with the terms per element and stays far above what different orders
  // give here (the model sums per block and along the tree, the reference row by row).
  DCUDA_CHECK(relative_tolerance(786) < 1e-12);
  DCUDA_CHECK(relative_tolerance(786) > 100 * 1.1e-16);
  const matrix_definition m = model_matrix(4);
  const auto b = input_vector(5, m.n);
  DCUDA_CHECK(max_relative_difference(distributed_product(m, 4, 1, b), reference_product(m, b)) <
              relative_tolerance(m.row_nonzeros) / 4);
}
