// How every baseline (MPI-CUDA, NCCL-CUDA) times its iterations: the warm-up ones, then every
// process waits for the others, then the timed ones from the host's clock until the stream has
// finished them, with the exchange counting its communication time over exactly those.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include "cuda_resources.h"
#include "mpi_process.h"

struct loop_times {
  double time_ms;  // the timed iterations, whole
  double comm_ms;  // the part the exchange spent communicating
};

// What a baseline reports of one run (it has no dcuda ranks).
inline run_figures baseline_run_figures(const char* version, const mpi_session& session,
                                        const loop_times& times) {
  return {version, session.size(), session.rank(), 0, times.time_ms, times.comm_ms};
}

// `exchange` provides start_timing() and communication_ms(); `iteration()` queues one iteration
// on `stream`.
template <typename Exchange, typename Iteration>
loop_times time_baseline_loop(int warmup, int iterations, cudaStream_t stream, Exchange& exchange,
                              Iteration&& iteration) {
  for (int t = 0; t < warmup; ++t) iteration();
  APP_CUDA(cudaStreamSynchronize(stream));
  APP_MPI(MPI_Barrier(MPI_COMM_WORLD));
  exchange.start_timing();
  const double start = MPI_Wtime();
  for (int t = 0; t < iterations; ++t) iteration();
  APP_CUDA(cudaStreamSynchronize(stream));
  const double time_ms = (MPI_Wtime() - start) * 1e3;
  return {time_ms, exchange.communication_ms()};
}
