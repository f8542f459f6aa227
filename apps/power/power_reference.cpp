#include "power_reference.h"

#include <algorithm>
#include <cmath>

namespace power {

double inverse_norm(const std::vector<double>& b) {
  double squares = 0;
  for (double v : b) squares += v * v;
  return 1.0 / std::sqrt(squares);
}

power_state initial_state(const matrix_definition& m, std::uint64_t seed) {
  power_state state;
  state.b = spmv::input_vector(seed, m.n);
  state.fac = inverse_norm(state.b);
  return state;
}

power_state reference_power(const matrix_definition& m, std::uint64_t seed, int iterations) {
  power_state state = initial_state(m, seed);
  std::vector<double> x(static_cast<std::size_t>(m.n));
  for (int k = 0; k < iterations; ++k) {
    for (long long row = 0; row < m.n; ++row) {
      double sum = 0;
      for (int e = 0; e < m.row_nonzeros; ++e)
        sum += spmv::entry_value(m, row, e) * state.b[spmv::entry_column(m, row, e)];
      x[row] = state.fac * sum;
    }
    std::swap(state.b, x);
    state.fac = inverse_norm(state.b);
  }
  return state;
}

std::vector<transpose_segment> transpose_segments(const block_layout& layout, int ranks,
                                                  long long begin, long long end) {
  std::vector<transpose_segment> segments;
  for_each_transpose_segment(layout, ranks, begin, end,
                             [&](const transpose_segment& s) { segments.push_back(s); });
  return segments;
}

std::vector<double> eigenvector(const power_state& state) {
  std::vector<double> v(state.b.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = state.fac * state.b[i];
  return v;
}

double eigenvalue(const power_state& state) {
  return 1.0 / state.fac;
}

deviations deviation_from(const power_state& result, const power_state& reference) {
  deviations d;
  const std::vector<double> v = eigenvector(result), expected = eigenvector(reference);
  if (v.size() != expected.size()) return {INFINITY, INFINITY};
  double largest = 0, difference = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    largest = std::max(largest, std::fabs(expected[i]));
    const double here = std::fabs(v[i] - expected[i]);
    if (std::isnan(here)) return {INFINITY, INFINITY};  // a NaN must fail the check
    difference = std::max(difference, here);
  }
  d.vector = difference / largest;
  d.value = std::fabs(eigenvalue(result) - eigenvalue(reference)) / eigenvalue(reference);
  if (std::isnan(d.value)) d.value = INFINITY;
  return d;
}

double tolerance(int row_nonzeros, long long n) {
  const double u = 1.0 / 9007199254740992.0;  // 2^-53
  return 4.0 * (2.0 * (row_nonzeros + 2) + static_cast<double>(n) + 2) * u;
}

namespace {

// Step 1's fac: down every column with the b slices (in dcuda leader to leader, before slice 0).
void broadcast_fac(spmv::distributed_model& model) {
  const spmv::process_grid& grid = model.layout.grid;
  for (int col = 0; col < grid.cols; ++col)
    for (const spmv::tree_message& message : spmv::broadcast_schedule(grid.rows))
      if (model.deliver(3))
        model.processes[grid.process_at(message.to, col)].fac =
            model.processes[grid.process_at(message.from, col)].fac;
}

// Step 5: every rank of the first column sends its slice of x, segment by segment, into the
// first row's b.
void transpose(spmv::distributed_model& model) {
  const block_layout& layout = model.layout;
  for (int row = 0; row < layout.grid.rows; ++row) {
    const int source = layout.grid.process_at(row, 0);
    for (int rank = 0; rank < model.ranks; ++rank) {
      const index_range mine = x_slice(layout, source, rank, model.ranks);
      for_each_transpose_segment(
          layout, model.ranks, mine.begin, mine.end(), [&](const transpose_segment& segment) {
            if (!model.deliver(2)) return;
            const spmv::process_state& from = model.processes[segment.source_process];
            spmv::process_state& to = model.processes[segment.target_process];
            const long long from_at = segment.global_begin - layout.rows_of(source).begin;
            const long long to_at =
                segment.global_begin - layout.cols_of(segment.target_process).begin;
            std::copy_n(from.y.begin() + from_at, segment.count, to.b.begin() + to_at);
          });
    }
  }
}

// Step 6: squares per rank slice of the first column, summed by each GPU's leader (here in rank
// order; the GPU adds them in a tree: the same up to rounding),
// reduced down the first column to process 0, whose fac goes along the first row.
void normalise(spmv::distributed_model& model) {
  const spmv::process_grid& grid = model.layout.grid;
  std::vector<double> sums(static_cast<std::size_t>(grid.rows), 0.0);
  for (int row = 0; row < grid.rows; ++row) {
    const spmv::process_state& p = model.processes[grid.process_at(row, 0)];
    for (int rank = 0; rank < model.ranks; ++rank) {
      const index_range part = spmv::slice(model.layout.block_rows(), rank, model.ranks);
      double partial = 0;
      for (long long i = part.begin; i < part.end(); ++i) partial += p.y[i] * p.y[i];
      sums[row] += partial;
    }
  }
  for (const spmv::tree_message& message : spmv::reduction_schedule(grid.rows))
    if (model.deliver(3)) sums[message.to] += sums[message.from];
  model.processes[0].fac = 1.0 / std::sqrt(sums[0]);
  for (const spmv::tree_message& message : spmv::broadcast_schedule(grid.cols))
    if (model.deliver(3))
      model.processes[grid.process_at(0, message.to)].fac =
          model.processes[grid.process_at(0, message.from)].fac;
}

}  // namespace

power_state distributed_power(const matrix_definition& m, int processes, int ranks_per_process,
                              std::uint64_t seed, int iterations, spmv::dropped_message drop) {
  const power_state start = initial_state(m, seed);
  spmv::distributed_model model = spmv::make_model(m, processes, ranks_per_process, start.b, drop);
  const spmv::process_grid& grid = model.layout.grid;
  // fac_0 is where b_0 is, on the first row; elsewhere it arrives with b (0 until then).
  for (int p = 0; p < processes; ++p) model.processes[p].fac = grid.row_of(p) == 0 ? start.fac : 0;
  for (int k = 0; k < iterations; ++k) {
    model.broadcast_b();
    broadcast_fac(model);
    model.multiply_blocks();
    model.reduce_rows();
    transpose(model);
    normalise(model);
  }
  power_state result;
  for (int col = 0; col < grid.cols; ++col) {
    const std::vector<double>& b = model.processes[grid.process_at(0, col)].b;
    result.b.insert(result.b.end(), b.begin(), b.end());
  }
  result.fac = model.processes[0].fac;
  return result;
}

}  // namespace power
