// The baselines' process set-up: MPI (initialised here unless the program already did), one GPU
// per process chosen by the process's rank within its node, and MPI calls checked by name
// (APP_MPI(MPI_Send(...)) throws std::runtime_error naming the call and MPI's error text).
#pragma once

#include <mpi.h>

#include <string>

#include "options.h"
#include "result.h"

void check_mpi(int status, const char* call);
#define APP_MPI(call) check_mpi((call), #call)

class mpi_session {
 public:
  // MPI_Init unless MPI is initialised already. return_errors: MPI errors on MPI_COMM_WORLD come
  // back as codes (checked by APP_MPI) instead of ending the job; a dcuda program leaves that
  // choice to the dcuda runtime, which shares the communicator.
  mpi_session(int& argc, char**& argv, bool return_errors = true);
  ~mpi_session();  // MPI_Finalize if this object initialised it
  mpi_session(const mpi_session&) = delete;
  mpi_session& operator=(const mpi_session&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int node_rank() const { return node_rank_; }  // rank among the processes of this node

 private:
  bool owns_mpi_ = false;
  int rank_ = 0;
  int size_ = 1;
  int node_rank_ = 0;
};

// cudaSetDevice(node rank modulo the GPUs of the node); returns the device chosen.
int select_gpu_by_node_rank(const mpi_session& session);

// The largest of every process's value (on every process).
double max_over_processes(double value);

// Collective: throws std::invalid_argument unless every process has `ranks` dcuda ranks (the
// case studies number world ranks GPU by GPU, rank r on GPU r / ranks).
void require_equal_ranks_per_gpu(int ranks);

// What one run of a version measured on this process; every version hands it to its
// application's check_and_report.
struct run_figures {
  const char* version;  // "dcuda", "mpi", "nccl"
  int processes;        // one per GPU
  int process;          // this one
  int ranks_per_gpu;    // dcuda ranks (thread blocks) per GPU; 0 for the baselines
  double time_ms;       // the timed iterations, whole
  double comm_ms;       // the part spent in communication; -1: not separable (dcuda)
};

// The collective end of every case study's run: the result line of `app` with the run's figures,
// the check's largest deviation and its tolerance, and the options (plus `extra_parameters`) as
// parameters. The line printed by process 0 carries the slowest process's times and "passed",
// "FAILED" or "off" (checked false). Returns the program's exit status: 1 when the check failed.
int report_run(const char* app, const app_options& options, int iterations, const run_figures& run,
               bool checked, double max_error, double tolerance,
               const std::string& extra_parameters = "");

// Times spans on the host's clock (MPI_Wtime) between begin() and end(), summed (the MPI-CUDA
// baselines' communication time, which blocks the host anyway). Off (counting nothing) until
// start(), which also sets the sum to zero.
class wall_clock_timer {
 public:
  void start() {
    on_ = true;
    total_ms_ = 0;
  }
  void begin() { begun_ = MPI_Wtime(); }
  void end() {
    if (on_) total_ms_ += (MPI_Wtime() - begun_) * 1e3;
  }
  double total_ms() const { return total_ms_; }

 private:
  bool on_ = false;
  double begun_ = 0;
  double total_ms_ = 0;
};

// "<program>: error: process <p>: <what>" on standard error, then MPI_Abort (or exit, where MPI
// is not initialised) with status 1.
[[noreturn]] void abort_with_error(const char* program, const std::string& what);

// Runs body and returns its exit status; an exception ends every process (abort_with_error).
template <typename Body>
int run_or_abort(const char* program, Body&& body) {
  try {
    return body();
  } catch (const std::exception& error) {
    abort_with_error(program, error.what());
  }
}

// Whether MPI takes device pointers (OpenMPI's MPIX_Query_cuda_support; false where MPI cannot
// say). The MPI-CUDA baselines stage through pinned host memory otherwise.
bool mpi_takes_device_buffers();
