// The baselines' process set-up: MPI (initialised here unless the program already did), one GPU
// per process chosen by the process's rank within its node, and MPI calls checked by name
// (APP_MPI(MPI_Send(...)) throws std::runtime_error naming the call and MPI's error text).
#pragma once

#include <mpi.h>

#include <string>

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

// The collective end of every case study's run: `result` holds this process's times (comm_ms
// negative where not separable) and the check's largest deviation; the line printed by process
// 0 carries the slowest process's times and "passed", "FAILED" or "off" (checked false).
// Returns the program's exit status: 1 when the check failed.
int report_run(app_result result, bool checked, int process);

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
