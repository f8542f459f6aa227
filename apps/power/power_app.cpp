#include "power_app.h"

#include <cuda_runtime.h>
#include <mpi.h>

#include <climits>
#include <stdexcept>

#include "cuda_resources.h"
#include "mpi_process.h"

namespace power {

app_options parse_options(int argc, char** argv, const char* program, int default_threads) {
  return spmv::parse_options(argc, argv, program, default_threads);
}

std::vector<double> initial_piece(const run_setup& setup, int process) {
  const index_range cols = setup.layout.cols_of(process);
  std::vector<double> piece(static_cast<std::size_t>(cols.count), 0.0);
  if (setup.layout.grid.row_of(process) == 0)
    for (long long i = 0; i < cols.count; ++i)
      piece[i] = spmv::vector_value(setup.seed, cols.begin + i);
  return piece;
}

double initial_fac(const run_setup& setup) {
  return inverse_norm(spmv::input_vector(setup.seed, setup.matrix.n));
}

int check_and_report(const app_options& options, const run_setup& setup, const run_figures& run,
                     const double* device_b, double fac) {
  const double allowed = tolerance(setup.matrix.row_nonzeros, setup.matrix.n);
  double deviation = 0;
  if (setup.check) {
    const long long piece = setup.layout.block_cols();
    if (piece > INT_MAX || piece * run.processes > INT_MAX)
      throw std::invalid_argument(
          "the result check gathers at most 2^31 values in all; use --check 0");
    std::vector<double> b(static_cast<std::size_t>(piece));
    APP_CUDA(cudaMemcpy(b.data(), device_b, b.size() * sizeof(double), cudaMemcpyDeviceToHost));
    std::vector<double> gathered(run.process == 0 ? b.size() * run.processes : 0);
    APP_MPI(MPI_Gather(b.data(), static_cast<int>(piece), MPI_DOUBLE, gathered.data(),
                       static_cast<int>(piece), MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (run.process == 0) {
      // The first row is processes col * rows: their pieces in column order make b.
      power_state result;
      result.fac = fac;
      for (int col = 0; col < setup.layout.grid.cols; ++col) {
        const auto first = gathered.begin() + setup.layout.grid.process_at(0, col) * piece;
        result.b.insert(result.b.end(), first, first + piece);
      }
      const power_state expected =
          reference_power(setup.matrix, setup.seed, setup.warmup + setup.iterations);
      deviation = deviation_from(result, expected).largest();
    }
    APP_MPI(MPI_Bcast(&deviation, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  }
  return report_run("power", options, setup.iterations, run, setup.check, deviation, allowed);
}

}  // namespace power
