// MPI for the benchmarks that run as 2 processes, one per GPU (`mpirun -np 2 <program>`):
// remote_latency, remote_bandwidth, network_engine, nvshmem_latency.
//
// The program initialises MPI itself (MPI_THREAD_SERIALIZED: dcuda's host proxy calls MPI from
// its own thread while a kernel runs, never at the same time as the program), before the first
// dcuda_host_init; dcuda then uses that MPI and leaves finalising it to the program. The
// benchmark's own messages (references, result exchange) go through a duplicate of
// MPI_COMM_WORLD, and only between dcuda sessions, where dcuda does not use MPI.
//
// Failures end the whole job: "FAIL: <benchmark>: <what>" on standard error, then MPI_Abort with
// status 1, so that the other process does not wait forever for a partner that has stopped.
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "common/statistics.h"

namespace dcuda_bench {

[[noreturn]] inline void fail_job(const char* benchmark, const std::string& what) {
  std::fflush(stdout);
  std::fprintf(stderr, "FAIL: %s: %s\n", benchmark, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

inline void check_mpi(int status, const char* call, const char* benchmark) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    fail_job(benchmark, std::string(call) + " failed: " + std::string(text, length));
  }
}

// MPI_Init_thread in the constructor, MPI_Finalize in the destructor: declare it first in main,
// so that it outlives every dcuda session.
class mpi_world {
 public:
  // `thread_level`: what the benchmark needs; MPI_THREAD_MULTIPLE where stream-ordered operations
  // go through the network (a thread of dcuda calls MPI beside the program's). The others ask
  // for no more than dcuda needs, so that MPI's own figures carry no cost of thread safety.
  mpi_world(int* argc, char*** argv, const char* benchmark,
            int thread_level = MPI_THREAD_SERIALIZED)
      : benchmark_(benchmark) {
    int provided = MPI_THREAD_SINGLE;
    check(MPI_Init_thread(argc, argv, thread_level, &provided), "MPI_Init_thread");
    if (provided < thread_level) {
      fail_job(benchmark, "MPI gives thread level " + std::to_string(provided) + "; " + benchmark +
                              " needs " + std::to_string(thread_level));
    }
    check(MPI_Comm_rank(MPI_COMM_WORLD, &process_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &processes_), "MPI_Comm_size");
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm node = MPI_COMM_NULL;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, process_, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    check(MPI_Comm_rank(node, &local_index_), "MPI_Comm_rank");
    check(MPI_Comm_size(node, &local_count_), "MPI_Comm_size");
    check(MPI_Comm_free(&node), "MPI_Comm_free");
  }
  ~mpi_world() {
    MPI_Comm_free(&comm_);
    MPI_Finalize();
  }
  mpi_world(const mpi_world&) = delete;
  mpi_world& operator=(const mpi_world&) = delete;

  // The benchmark's own communicator (a duplicate of MPI_COMM_WORLD).
  MPI_Comm comm() const { return comm_; }
  int process() const { return process_; }
  int processes() const { return processes_; }
  bool prints() const { return process_ == 0; }     // only process 0 prints tables and writes JSON
  int local_index() const { return local_index_; }  // among the processes of this node
  int local_count() const { return local_count_; }
  bool one_node() const { return local_count_ == processes_; }
  const char* benchmark() const { return benchmark_; }

  void check(int status, const char* call) const { check_mpi(status, call, benchmark_); }

  // Whether any process holds `flag`, on every process (collective).
  bool any(bool flag) const {
    int mine = flag ? 1 : 0;
    int all = 0;
    check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, comm_), "MPI_Allreduce");
    return all != 0;
  }

  // The sum over all processes, on every process (collective).
  long long sum(long long value) const {
    long long total = 0;
    check(MPI_Allreduce(&value, &total, 1, MPI_LONG_LONG, MPI_SUM, comm_), "MPI_Allreduce");
    return total;
  }

  // Element-wise sums over all processes, on every process (collective; the same length on
  // every process).
  std::vector<int> sum_each(std::vector<int> values) const {
    check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT,
                        MPI_SUM, comm_),
          "MPI_Allreduce");
    return values;
  }

  // Process 0's value, on every process (collective).
  double from_process0(double value) const {
    check(MPI_Bcast(&value, 1, MPI_DOUBLE, 0, comm_), "MPI_Bcast");
    return value;
  }
  // Process 0's figure (median and range), on every process (collective).
  figure from_process0(const figure& value) const {
    return {from_process0(value.median), from_process0(value.min), from_process0(value.max)};
  }

 private:
  const char* benchmark_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int process_ = 0;
  int processes_ = 1;
  int local_index_ = 0;
  int local_count_ = 1;
};

// Why the processes cannot each drive a GPU of their own, or "" (collective): a process that sees
// no GPU (with the CUDA error that hides them), or fewer than `needed` GPUs.
inline std::string gpu_shortage(const mpi_world& world, int needed) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  int seen[2] = {status == cudaSuccess ? count : -1, static_cast<int>(status)};
  std::vector<int> all(2 * static_cast<std::size_t>(world.processes()));
  world.check(MPI_Allgather(seen, 2, MPI_INT, all.data(), 2, MPI_INT, world.comm()),
              "MPI_Allgather");
  for (int p = 0; p < world.processes(); ++p) {
    const int devices = all[2 * static_cast<std::size_t>(p)];
    if (devices < 0) {
      return "no CUDA GPU found (process " + std::to_string(p) + ": cudaGetDeviceCount: " +
             cudaGetErrorString(
                 static_cast<cudaError_t>(all[2 * static_cast<std::size_t>(p) + 1])) +
             ")";
    }
    if (devices == 0) return "no CUDA GPU found (process " + std::to_string(p) + ": 0 devices)";
    if (devices < needed) {
      return "process " + std::to_string(p) + " sees " + std::to_string(devices) + " GPU(s); " +
             std::to_string(needed) +
             " GPUs of one node are needed, one per process (is CUDA_VISIBLE_DEVICES set? start "
             "at most as many processes as there are GPUs)";
    }
  }
  return "";
}

// Process 0 prints "SKIP: <benchmark>: <reason>" when there is a reason; every process returns
// whether there was one (the program then exits with status 0 and writes no JSON).
inline bool skip_for(const mpi_world& world, const std::string& reason) {
  if (reason.empty()) return false;
  if (world.prints()) {
    std::printf("SKIP: %s: %s\n", world.benchmark(), reason.c_str());
    std::fflush(stdout);
  }
  return true;
}

// Whether the job cannot run a benchmark of 2 processes with one GPU each (collective; skip_for
// says why). `one_node`: both processes must run on one node (the peer path, CUDA IPC).
inline bool skip_without_two_gpus(const mpi_world& world, bool one_node) {
  if (world.processes() != 2) {
    return skip_for(world, "started as " + std::to_string(world.processes()) +
                               " MPI process(es); it needs exactly 2, one per GPU: mpirun -np 2 "
                               "<program>");
  }
  std::string reason = gpu_shortage(world, world.one_node() ? 2 : 1);
  if (reason.empty() && one_node && !world.one_node()) {
    reason = "the 2 processes run on different nodes; this benchmark measures 2 GPUs of one node";
  }
  return skip_for(world, reason);
}

// Whether the job cannot run with one GPU of one node for each of its 2 or more processes
// (collective; skip_for says why).
inline bool skip_without_a_gpu_per_process(const mpi_world& world) {
  if (world.processes() < 2) {
    return skip_for(world, "started as " + std::to_string(world.processes()) +
                               " MPI process; it needs 2 or more, one per GPU of one node: "
                               "mpirun -np P <program>");
  }
  if (!world.one_node()) {
    return skip_for(world, "the " + std::to_string(world.processes()) +
                               " processes run on more than one node; this benchmark measures "
                               "the GPUs of one node");
  }
  return skip_for(world, gpu_shortage(world, world.processes()));
}

// Whether every process drives a GPU of its own (collective; after the GPU is selected). Compares
// the GPUs' UUIDs, which do not depend on CUDA_VISIBLE_DEVICES.
inline bool gpus_distinct(const mpi_world& world, std::size_t* gpus = nullptr) {
  int device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    fail_job(world.benchmark(), "cannot read the properties of the current GPU");
  }
  constexpr std::size_t uuid_bytes = sizeof properties.uuid;
  std::vector<char> uuids(uuid_bytes * static_cast<std::size_t>(world.processes()));
  world.check(MPI_Allgather(&properties.uuid, uuid_bytes, MPI_BYTE, uuids.data(), uuid_bytes,
                            MPI_BYTE, world.comm()),
              "MPI_Allgather");
  std::set<std::string> distinct;
  for (int p = 0; p < world.processes(); ++p) {
    distinct.emplace(uuids.data() + uuid_bytes * static_cast<std::size_t>(p), uuid_bytes);
  }
  if (gpus != nullptr) *gpus = distinct.size();
  return distinct.size() == static_cast<std::size_t>(world.processes());
}

// Fails the job unless every process drives a GPU of its own (collective; after the GPU is
// selected).
inline void require_distinct_gpus(const mpi_world& world) {
  std::size_t gpus = 0;
  if (gpus_distinct(world, &gpus)) return;
  fail_job(world.benchmark(), std::to_string(world.processes()) + " processes run on " +
                                  std::to_string(gpus) +
                                  " GPU(s); each needs its own (do not set DCUDA_DEVICE / "
                                  "--dcuda-device to one value for several)");
}

}  // namespace dcuda_bench
