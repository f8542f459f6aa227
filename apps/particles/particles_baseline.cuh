// The bulk-synchronous baselines of the particles (thesis 5.4's MPI-CUDA, and the same with
// NCCL): the move is a kernel over all segments of the GPU (one block per segment), then the
// migrants go to the neighbouring GPUs; the migration is a kernel, then the boundary segments go
// to the neighbouring GPUs' ghost segments (messages_of). `Exchange` is the communication (MPI or
// NCCL); it exposes
//   void exchange(exchange_kind kind);  // the messages of messages_of(kind, ...)
//   double communication_ms();          // the time its exchanges took over the timed iterations
//   void start_timing();                // from now on, count communication time
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>

#include "baseline_loop.h"
#include "cuda_resources.h"
#include "mpi_process.h"
#include "particles_app.h"
#include "particles_kernels.cuh"
#include "particles_reference.h"

namespace particles {

template <typename MakeExchange>
int run_baseline(int argc, char** argv, const char* program, const char* version,
                 MakeExchange make_exchange) {
  mpi_session session(argc, argv);
  select_gpu_by_node_rank(session);
  const app_options options = parse_options(argc, argv, program);
  const run_setup setup = setup_from(options);
  const int threads = options.get_int("threads");
  // The move kernel's registers limit its blocks (64 per thread at sm_90 with CUDA 13: at most
  // 1024 threads; ask the kernel rather than trust a number).
  cudaFuncAttributes move_attributes{};
  APP_CUDA(cudaFuncGetAttributes(&move_attributes, move_kernel));
  const int most = std::min(move_attributes.maxThreadsPerBlock, 1024) / 32 * 32;
  if (threads < 32 || threads > most || threads % 32 != 0)
    throw std::invalid_argument("--threads " + std::to_string(threads) +
                                " must be a multiple of 32 in 32.." + std::to_string(most) +
                                " (the move kernel's registers allow no more)");

  const int owning_blocks = options.get_int("blocks");
  if (owning_blocks < 0 || owning_blocks > setup.segments)
    throw std::invalid_argument("--blocks " + std::to_string(owning_blocks) +
                                " must be 0 (a block per segment) or 1.." +
                                std::to_string(setup.segments) + " (the segments per GPU)");
  const bool owned_by_blocks = owning_blocks > 0;
  const int blocks = owned_by_blocks ? owning_blocks : setup.segments;

  device_particles state(setup, session.rank(), session.size());
  const stores st = state.views();
  const motion m{setup.whole(session.size()), session.rank() * setup.segments};
  cuda_stream stream;
  auto exchange = make_exchange(session, state, stream.get());

  auto iteration = [&] {
    if (owned_by_blocks)
      move_shares_kernel<<<blocks, threads, 0, stream.get()>>>(st, m, setup.segments,
                                                               state.error.get());
    else
      move_kernel<<<blocks, threads, 0, stream.get()>>>(st, m, state.error.get());
    APP_CUDA(cudaGetLastError());
    exchange.exchange(exchange_kind::migrants);
    if (owned_by_blocks)
      migrate_shares_kernel<<<blocks, threads, 0, stream.get()>>>(
          st, m.first_segment, setup.segments, state.error.get());
    else
      migrate_kernel<<<blocks, threads, 0, stream.get()>>>(st, m.first_segment, state.error.get());
    APP_CUDA(cudaGetLastError());
    exchange.exchange(exchange_kind::ghosts);
  };

  return each_run(
      options, [&] { state.load_input(setup, session.rank(), session.size()); },
      [&] {
        exchange.exchange(exchange_kind::ghosts);
        const loop_times times =
            time_baseline_loop(setup.warmup, setup.iterations, stream.get(), exchange, iteration);
        return check_and_report(options, setup, baseline_run_figures(version, session, times),
                                state);
      });
}

}  // namespace particles
