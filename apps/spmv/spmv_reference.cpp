#include "spmv_reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace spmv {

block_csr make_block(const matrix_definition& m, index_range rows, index_range cols) {
  block_csr a;
  a.rows = rows.count;
  a.cols = cols.count;
  a.row_offsets.reserve(static_cast<std::size_t>(rows.count) + 1);
  a.row_offsets.push_back(0);
  for (long long r = 0; r < rows.count; ++r) {
    for_each_entry_in(m, rows.begin + r, cols, [&](int column, double value) {
      a.columns.push_back(column);
      a.values.push_back(value);
    });
    if (a.columns.size() > 0xFFFFFFFFull)
      throw std::invalid_argument("make_block: a block has more than 2^32 - 1 nonzeros");
    a.row_offsets.push_back(static_cast<unsigned>(a.columns.size()));
  }
  return a;
}

void multiply_rows(const block_csr& a, const double* b, double* y, long long first, long long count,
                   double scale) {
  for (long long r = 0; r < count; ++r) {
    double sum = 0;
    for (unsigned e = a.row_offsets[first + r]; e < a.row_offsets[first + r + 1]; ++e)
      sum += a.values[e] * b[a.columns[e]];
    y[r] = scale * sum;
  }
}

std::vector<double> input_vector(std::uint64_t seed, long long n) {
  std::vector<double> b(static_cast<std::size_t>(n));
  for (long long i = 0; i < n; ++i) b[i] = vector_value(seed, i);
  return b;
}

std::vector<double> reference_product(const matrix_definition& m, const std::vector<double>& b) {
  std::vector<double> y(static_cast<std::size_t>(m.n));
  for (long long row = 0; row < m.n; ++row) {
    double sum = 0;
    for (int k = 0; k < m.row_nonzeros; ++k)
      sum += entry_value(m, row, k) * b[entry_column(m, row, k)];
    y[row] = sum;
  }
  return y;
}

std::vector<std::vector<double>> dense_matrix(const matrix_definition& m) {
  std::vector<std::vector<double>> dense(static_cast<std::size_t>(m.n),
                                         std::vector<double>(static_cast<std::size_t>(m.n), 0.0));
  for (long long row = 0; row < m.n; ++row)
    for (int k = 0; k < m.row_nonzeros; ++k)
      dense[row][entry_column(m, row, k)] += entry_value(m, row, k);
  return dense;
}

bool distributed_model::deliver(int phase) {
  const int index = sent[phase]++;
  return !(drop.phase == phase && drop.index == index);
}

void distributed_model::broadcast_b() {
  const process_grid& grid = layout.grid;
  const long long length = layout.block_cols();
  for (int col = 0; col < grid.cols; ++col)
    for (const tree_message& message : broadcast_schedule(grid.rows)) {
      const process_state& from = processes[grid.process_at(message.from, col)];
      process_state& to = processes[grid.process_at(message.to, col)];
      for (int rank = 0; rank < ranks; ++rank) {
        const index_range part = slice(length, rank, ranks);
        if (deliver(0))
          std::copy_n(from.b.begin() + part.begin, part.count, to.b.begin() + part.begin);
      }
    }
}

void distributed_model::multiply_blocks() {
  for (process_state& p : processes) multiply_rows(p.a, p.b.data(), p.y.data(), 0, p.a.rows, p.fac);
}

void distributed_model::reduce_rows() {
  const process_grid& grid = layout.grid;
  const long long length = layout.block_rows();
  for (int row = 0; row < grid.rows; ++row)
    for (const tree_message& message : reduction_schedule(grid.cols)) {
      const process_state& from = processes[grid.process_at(row, message.from)];
      process_state& to = processes[grid.process_at(row, message.to)];
      for (int rank = 0; rank < ranks; ++rank) {
        const index_range part = slice(length, rank, ranks);
        if (deliver(1))
          for (long long i = part.begin; i < part.end(); ++i) to.y[i] += from.y[i];
      }
    }
}

std::vector<double> distributed_model::first_column_result() const {
  std::vector<double> x;
  x.reserve(static_cast<std::size_t>(layout.n));
  for (int row = 0; row < layout.grid.rows; ++row) {
    const std::vector<double>& y = processes[layout.grid.process_at(row, 0)].y;
    x.insert(x.end(), y.begin(), y.end());
  }
  return x;
}

distributed_model make_model(const matrix_definition& m, int processes, int ranks_per_process,
                             const std::vector<double>& b, dropped_message drop) {
  distributed_model model;
  model.layout = {grid_for(processes), m.n};
  const process_grid& grid = model.layout.grid;
  if (m.n % grid.processes() != 0)
    throw std::invalid_argument("make_model: n = " + std::to_string(m.n) +
                                " is not a multiple of the " + std::to_string(grid.processes()) +
                                " processes");
  model.ranks = ranks_per_process;
  model.drop = drop;
  for (int p = 0; p < processes; ++p) {
    process_state state;
    const index_range rows = model.layout.rows_of(p), cols = model.layout.cols_of(p);
    state.a = make_block(m, rows, cols);
    state.b.assign(static_cast<std::size_t>(cols.count), 0.0);
    if (grid.row_of(p) == 0) std::copy_n(b.begin() + cols.begin, cols.count, state.b.begin());
    state.y.assign(static_cast<std::size_t>(rows.count), 0.0);
    model.processes.push_back(std::move(state));
  }
  return model;
}

std::vector<double> distributed_product(const matrix_definition& m, int processes,
                                        int ranks_per_process, const std::vector<double>& b,
                                        dropped_message drop) {
  distributed_model model = make_model(m, processes, ranks_per_process, b, drop);
  model.broadcast_b();
  model.multiply_blocks();
  model.reduce_rows();
  return model.first_column_result();
}

double max_relative_difference(const std::vector<double>& a, const std::vector<double>& reference) {
  if (a.size() != reference.size()) return INFINITY;
  double largest = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double difference = std::fabs(a[i] - reference[i]) / std::fabs(reference[i]);
    if (std::isnan(difference)) return INFINITY;  // a NaN must fail every comparison's check
    largest = std::max(largest, difference);
  }
  return largest;
}

}  // namespace spmv
