// The bulk-synchronous baselines of power iteration (thesis 5.7's MPI-CUDA, and the same with
// NCCL): the six steps of power_problem.h one after another, each a kernel or rounds of messages
// (spmv_exchange.h), the GPU idle during communication and the network idle during kernels. fac
// travels as the element after b (b and fac go down the columns as one message).
#pragma once

#include <algorithm>
#include <vector>

#include "baseline_loop.h"
#include "cuda_resources.h"
#include "mpi_process.h"
#include "power_app.h"
#include "power_kernels.cuh"
#include "spmv_exchange.h"

namespace power {

// Step 5 at the process level: this process's sends (first column: pieces of its x) and receives
// (first row: pieces of its b), one round. With one rank per process a segment is a whole
// (source, target) pair's message.
inline spmv::round_transfers transpose_round(const block_layout& layout, int process, double* y,
                                             double* b) {
  spmv::round_transfers round;
  if (layout.grid.col_of(process) == 0) {
    const index_range mine = layout.rows_of(process);
    for (const transpose_segment& s : transpose_segments(layout, 1, mine.begin, mine.end()))
      round.sends.push_back(
          {y + (s.global_begin - mine.begin), static_cast<std::size_t>(s.count), s.target_process});
  }
  if (layout.grid.row_of(process) == 0) {
    const index_range mine = layout.cols_of(process);
    for (const transpose_segment& s : transpose_segments(layout, 1, mine.begin, mine.end()))
      round.receives.push_back(
          {b + (s.global_begin - mine.begin), static_cast<std::size_t>(s.count), s.source_process});
  }
  return round;
}

template <typename MakeExchange>
int run_baseline(int argc, char** argv, const char* program, const char* version,
                 MakeExchange make_exchange) {
  mpi_session session(argc, argv);
  select_gpu_by_node_rank(session);
  const app_options options = parse_options(argc, argv, program, 256);
  const run_setup setup = spmv::setup_from(options, session.size());
  const block_layout& layout = setup.layout;
  const spmv::process_grid& grid = layout.grid;
  const int process = session.rank();
  const int row = grid.row_of(process), col = grid.col_of(process);

  const spmv::device_csr a(setup.matrix, layout.rows_of(process), layout.cols_of(process));
  const std::size_t rows = static_cast<std::size_t>(layout.block_rows());
  const std::size_t cols = static_cast<std::size_t>(layout.block_cols());
  // b_and_fac: b (cols values), then fac. squares: this piece's sum, then a received one.
  device_array<double> b_and_fac(cols + 1), y(rows), received(rows), squares(2);
  double* b = b_and_fac.get();
  double* fac = b + cols;
  std::vector<double> start = initial_piece(setup, process);
  start.push_back(row == 0 ? initial_fac(setup) : 0.0);
  cuda_stream stream;
  auto exchange = make_exchange(session, stream.get());

  const auto broadcast = spmv::column_broadcast_rounds(grid, process, b, cols + 1);
  const auto reduction = spmv::row_reduction_rounds(grid, process, y.get(), received.get(), rows);
  const spmv::round_transfers transpose = transpose_round(layout, process, y.get(), b);
  // Step 6: the first column's sums down to process 0, fac from it along the first row.
  std::vector<spmv::round_transfers> norm_reduction, fac_broadcast;
  if (col == 0)
    norm_reduction = spmv::reduction_rounds(
        grid.rows, row, [&](int r) { return grid.process_at(r, 0); }, squares.get(),
        squares.get() + 1, 1);
  if (row == 0)
    fac_broadcast = spmv::broadcast_rounds(
        grid.cols, col, [&](int c) { return grid.process_at(0, c); }, fac, 1);

  const int threads = setup.threads;
  const int multiply_blocks = spmv::blocks_for(static_cast<long long>(rows), 32, threads);
  const int add_blocks = spmv::blocks_for(static_cast<long long>(rows), 1, threads);
  // Step 6's first pass: a block per 4096 elements, at most 1024.
  const unsigned square_blocks =
      static_cast<unsigned>(std::min<std::size_t>(1024, (rows + 4095) / 4096));
  device_array<double> square_partials(square_blocks);
  // The state a run starts from (--runs): b_0 and fac_0 (first row), everything else zero.
  const auto load_input = [&] {
    for (const device_array<double>* vector :
         {&b_and_fac, &y, &received, &squares, &square_partials})
      vector->clear();
    APP_CUDA(cudaMemcpy(b, start.data(), start.size() * sizeof(double), cudaMemcpyHostToDevice));
    APP_CUDA(cudaDeviceSynchronize());
  };
  load_input();
  cudaStream_t s = stream.get();
  auto iteration = [&] {
    for (const spmv::round_transfers& round : broadcast) exchange.round(round);  // 1
    scaled_multiply_kernel<<<multiply_blocks, threads, 0, s>>>(a.view(), b, fac, y.get(),
                                                               static_cast<unsigned>(rows));  // 2-3
    APP_CUDA(cudaGetLastError());
    for (const spmv::round_transfers& round : reduction) {  // 4
      exchange.round(round);
      if (!round.receives.empty()) {
        spmv::add_kernel<<<add_blocks, threads, 0, s>>>(y.get(), received.get(),
                                                        static_cast<unsigned>(rows));
        APP_CUDA(cudaGetLastError());
      }
    }
    exchange.round(transpose);  // 5
    if (col == 0) {             // 6
      partial_squares_kernel<<<square_blocks, 256, 0, s>>>(y.get(), static_cast<unsigned>(rows),
                                                           square_partials.get());
      APP_CUDA(cudaGetLastError());
      sum_partials_kernel<<<1, 1024, 0, s>>>(square_partials.get(), square_blocks, squares.get());
      APP_CUDA(cudaGetLastError());
      for (const spmv::round_transfers& round : norm_reduction) {
        exchange.round(round);
        if (!round.receives.empty()) {
          spmv::add_kernel<<<1, 32, 0, s>>>(squares.get(), squares.get() + 1, 1);
          APP_CUDA(cudaGetLastError());
        }
      }
      if (process == 0) {
        inverse_root_kernel<<<1, 1, 0, s>>>(squares.get(), fac);
        APP_CUDA(cudaGetLastError());
      }
    }
    for (const spmv::round_transfers& round : fac_broadcast) exchange.round(round);
  };

  return each_run(options, load_input, [&] {
    const loop_times times =
        time_baseline_loop(setup.warmup, setup.iterations, s, exchange, iteration);
    double final_fac = 0;
    APP_CUDA(cudaMemcpy(&final_fac, fac, sizeof(double), cudaMemcpyDeviceToHost));
    return check_and_report(options, setup, baseline_run_figures(version, session, times), b,
                            final_fac);
  });
}

}  // namespace power
