#include "mpi_process.h"

#include <cuda_runtime.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "cuda_resources.h"

void check_mpi(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, length));
}

mpi_session::mpi_session(int& argc, char**& argv, bool return_errors) {
  int initialised = 0;
  APP_MPI(MPI_Initialized(&initialised));
  if (!initialised) {
    // SERIALIZED: the level the dcuda runtime needs (its host proxy thread calls MPI), asked for
    // by every version alike.
    int provided = 0;
    APP_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided));
    owns_mpi_ = true;
    if (provided < MPI_THREAD_SERIALIZED)
      throw std::runtime_error("MPI_Init_thread provides thread level " + std::to_string(provided) +
                               ", below MPI_THREAD_SERIALIZED");
  }
  // Errors come back as codes and go through check_mpi instead of ending the job silently.
  if (return_errors) APP_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  APP_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  APP_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size_));
  MPI_Comm node;
  APP_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
  APP_MPI(MPI_Comm_rank(node, &node_rank_));
  APP_MPI(MPI_Comm_free(&node));
}

mpi_session::~mpi_session() {
  if (owns_mpi_) MPI_Finalize();
}

int select_gpu_by_node_rank(const mpi_session& session) {
  int devices = 0;
  APP_CUDA(cudaGetDeviceCount(&devices));
  if (devices == 0) throw std::runtime_error("cudaGetDeviceCount found no GPU");
  const int device = session.node_rank() % devices;
  APP_CUDA(cudaSetDevice(device));
  return device;
}

double max_over_processes(double value) {
  double largest = 0;
  APP_MPI(MPI_Allreduce(&value, &largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return largest;
}

[[noreturn]] void abort_with_error(const char* program, const std::string& what) {
  int rank = 0, initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (initialised && !finalised) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "%s: error: process %d: %s\n", program, rank, what.c_str());
  std::fflush(stderr);
  if (initialised && !finalised) MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

bool mpi_takes_device_buffers() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() != 0;
#else
  return false;
#endif
}

int report_run(const char* app, const app_options& options, int iterations, const run_figures& run,
               bool checked, double max_error, double tolerance,
               const std::string& extra_parameters) {
  app_result result;
  result.app = app;
  result.version = run.version;
  result.gpus = run.processes;
  result.ranks_per_gpu = run.ranks_per_gpu;
  result.iterations = iterations;
  result.time_ms = max_over_processes(run.time_ms);
  result.comm_ms = run.comm_ms < 0 ? -1 : max_over_processes(run.comm_ms);
  result.max_error = max_error;
  result.tolerance = tolerance;
  result.parameters = options.summary() + extra_parameters;
  const bool failed = checked && !(result.max_error <= result.tolerance);
  result.check = !checked ? "off" : failed ? "FAILED" : "passed";
  if (run.process == 0) print_result(result);
  return failed ? 1 : 0;
}

void require_equal_ranks_per_gpu(int ranks) {
  int fewest = 0, most = 0;
  APP_MPI(MPI_Allreduce(&ranks, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  APP_MPI(MPI_Allreduce(&ranks, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (fewest != most)
    throw std::invalid_argument("every GPU must run the same number of ranks (here " +
                                std::to_string(fewest) + " to " + std::to_string(most) +
                                "); set DCUDA_RANKS_PER_DEVICE");
}
