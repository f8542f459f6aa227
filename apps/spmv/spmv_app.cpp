#include "spmv_app.h"

#include <cuda_runtime.h>
#include <mpi.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "cuda_resources.h"
#include "mpi_process.h"
#include "spmv_reference.h"

namespace spmv {

app_options parse_options(int argc, char** argv, const char* program, int default_threads) {
  return app_options(
      argc, argv, program,
      case_study_options(
          {{"n", 262144, "block size per GPU: the matrix is n * sqrt(GPUs) square"},
           {"row-nonzeros", 786, "nonzeros per row of an n-column block (786: density 0.3%)"}},
          {{"threads", default_threads, "threads per block (baselines) or per rank (dcuda)"},
           {"phases", 0, "dcuda: 1 prints where the ranks' time goes (rank_phase_clock.cuh)"}},
          "matrix and vector seed"));
}

run_setup setup_from(const app_options& options, int processes) {
  run_setup setup;
  setup.n_block = options.get("n");
  setup.block_row_nonzeros = options.get_int("row-nonzeros");
  setup.iterations = options.get_int("iterations");
  setup.warmup = options.get_int("warmup");
  setup.check = options.get("check") != 0;
  setup.seed = static_cast<std::uint64_t>(options.get("seed"));
  setup.threads = options.get_int("threads");
  if (setup.n_block < 1 || setup.block_row_nonzeros < 1 || setup.iterations < 0 ||
      setup.warmup < 0 || setup.threads < 32 || setup.threads > 1024 || setup.threads % 32 != 0)
    throw std::invalid_argument(
        "n and row-nonzeros must be at least 1, iterations and warmup at least 0, threads a "
        "multiple of 32 in 32..1024 (" +
        options.summary() + ")");
  const process_grid grid = grid_for(processes);
  setup.matrix = weak_scaled_matrix(setup.n_block, setup.block_row_nonzeros, processes, grid.rows,
                                    grid.cols, setup.seed);
  setup.layout = {grid, setup.matrix.n};
  // Columns are hashed into 32 bits (spmv_matrix.h); local columns and row offsets are 32-bit.
  if (setup.matrix.n >= (1ll << 31))
    throw std::invalid_argument("the global matrix of " + std::to_string(setup.matrix.n) +
                                " rows exceeds 2^31; use a smaller n");
  const double block_nonzeros =
      static_cast<double>(setup.layout.block_rows()) * setup.matrix.row_nonzeros / grid.cols;
  if (block_nonzeros > 0.9 * 4294967295.0)
    throw std::invalid_argument("a block of about " + std::to_string(block_nonzeros) +
                                " nonzeros exceeds the 32-bit row offsets; use a smaller n");
  return setup;
}

double relative_tolerance(int row_nonzeros) {
  const double u = 1.0 / 9007199254740992.0;  // 2^-53
  return 2.0 * (row_nonzeros + 2) * u;
}

double deviation_from_reference(const run_setup& setup, const std::vector<double>& y, int process,
                                int processes) {
  const long long piece = setup.layout.block_rows();
  if (piece > INT_MAX || piece * processes > INT_MAX)
    throw std::invalid_argument(
        "the result check gathers at most 2^31 values in all; use --check 0");
  std::vector<double> gathered(process == 0 ? static_cast<std::size_t>(piece) * processes : 0);
  APP_MPI(MPI_Gather(y.data(), static_cast<int>(piece), MPI_DOUBLE, gathered.data(),
                     static_cast<int>(piece), MPI_DOUBLE, 0, MPI_COMM_WORLD));
  double deviation = 0;
  if (process == 0) {
    // Processes 0..rows-1 are the first column (process = col * rows + row), in row order.
    gathered.resize(static_cast<std::size_t>(setup.matrix.n));
    const std::vector<double> expected =
        reference_product(setup.matrix, input_vector(setup.seed, setup.matrix.n));
    deviation = max_relative_difference(gathered, expected);
  }
  APP_MPI(MPI_Bcast(&deviation, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  return deviation;
}

int check_and_report(const app_options& options, const run_setup& setup, const run_figures& run,
                     const double* device_y) {
  const double tolerance = relative_tolerance(setup.matrix.row_nonzeros);
  double deviation = 0;
  if (setup.check) {
    std::vector<double> y(static_cast<std::size_t>(setup.layout.block_rows()));
    APP_CUDA(cudaMemcpy(y.data(), device_y, y.size() * sizeof(double), cudaMemcpyDeviceToHost));
    deviation = deviation_from_reference(setup, y, run.process, run.processes);
  }
  return report_run("spmv", options, setup.iterations, run, setup.check, deviation, tolerance);
}

}  // namespace spmv
