// The bulk-synchronous baselines of spmv (thesis 5.6's MPI-CUDA, and the same with NCCL): per
// iteration, b goes down each grid column round by round (binomial broadcast), one kernel
// multiplies the whole block, the partial results go along each grid row round by round
// (binomial reduction; after each receiving round a kernel adds), and a barrier of all processes
// ends the iteration. `Exchange` is the communication (spmv_exchange.h).
#pragma once

#include <vector>

#include "baseline_loop.h"
#include "cuda_resources.h"
#include "mpi_process.h"
#include "spmv_app.h"
#include "spmv_exchange.h"
#include "spmv_kernels.cuh"

namespace spmv {

template <typename MakeExchange>
int run_baseline(int argc, char** argv, const char* program, const char* version,
                 MakeExchange make_exchange) {
  mpi_session session(argc, argv);
  select_gpu_by_node_rank(session);
  const app_options options = parse_options(argc, argv, program, 256);
  const run_setup setup = setup_from(options, session.size());
  const block_layout& layout = setup.layout;
  const int process = session.rank();

  const device_csr a(setup.matrix, layout.rows_of(process), layout.cols_of(process));
  const std::size_t rows = static_cast<std::size_t>(layout.block_rows());
  const std::size_t cols = static_cast<std::size_t>(layout.block_cols());
  device_array<double> b(cols), y(rows), received(rows);
  // The state a run starts from (--runs): b of the first process row, everything else zero.
  const auto load_input = [&] {
    for (const device_array<double>* vector : {&b, &y, &received}) vector->clear();
    upload_input_piece(layout, process, setup.seed, b.get());
    APP_CUDA(cudaDeviceSynchronize());
  };
  load_input();
  cuda_stream stream;
  auto exchange = make_exchange(session, stream.get());

  const auto broadcast = column_broadcast_rounds(layout.grid, process, b.get(), cols);
  const auto reduction = row_reduction_rounds(layout.grid, process, y.get(), received.get(), rows);
  const int threads = setup.threads;
  const int multiply_blocks = blocks_for(static_cast<long long>(rows), 32, threads);
  const int add_blocks = blocks_for(static_cast<long long>(rows), 1, threads);
  auto iteration = [&] {
    for (const round_transfers& round : broadcast) exchange.round(round);
    multiply_kernel<<<multiply_blocks, threads, 0, stream.get()>>>(a.view(), b.get(), y.get(),
                                                                   static_cast<unsigned>(rows));
    APP_CUDA(cudaGetLastError());
    for (const round_transfers& round : reduction) {
      exchange.round(round);
      if (!round.receives.empty()) {
        add_kernel<<<add_blocks, threads, 0, stream.get()>>>(y.get(), received.get(),
                                                             static_cast<unsigned>(rows));
        APP_CUDA(cudaGetLastError());
      }
    }
    exchange.barrier();
  };

  return each_run(options, load_input, [&] {
    const loop_times times =
        time_baseline_loop(setup.warmup, setup.iterations, stream.get(), exchange, iteration);
    return check_and_report(options, setup, baseline_run_figures(version, session, times), y.get());
  });
}

}  // namespace spmv
