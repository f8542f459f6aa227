// barrier_latency: what dcuda_comm_barrier costs when every resident rank takes part, on one GPU
// and across the GPUs of a node (`mpirun -np P`, P >= 1, one GPU per process). The case studies
// end iterations with barriers (spmv: DCUDA_COMM_WORLD; power: DCUDA_COMM_DEVICE), and the
// thesis calls spmv's world barrier the worst case for dCUDA (docs/case-studies.md).
//
// Rank 0 (process 0) times repetitions of back-to-back barriers with the GPU's global timer; the
// figure is the median time per barrier. References, same run, same GPU, same blocks and threads:
// - DCUDA_COMM_DEVICE against grid.sync() of a cooperative kernel (the floor of a GPU-wide
//   barrier), and against one empty kernel launch on a stream (the kernel boundary a
//   bulk-synchronous code pays for its GPU-wide step);
// - DCUDA_COMM_WORLD against the MPI-CUDA baselines' barrier: an empty kernel, then
//   cudaStreamSynchronize and MPI_Barrier among the processes; with several processes also
//   against dcuda's own world barrier through the host proxies (a second context with
//   --dcuda-host-world-barrier=1), the path it takes between nodes and took within a node before
//   the GPUs' leaders met on the device (protocol/node_barrier.h).
// Every rank counts the barriers it passed; a count that differs fails the run.
#include <cooperative_groups.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/mpi_world.h"
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "dcuda/detail/device/clock.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "barrier_latency";
constexpr int threads_per_rank = 1024;
constexpr int warmup = 100;     // untimed barriers first
constexpr int barriers = 1000;  // per repetition

enum barrier_kind : int { device_barrier, world_barrier, barrier_kinds };

// What the dcuda run measures, and its results (the user data of dcuda_host_run).
struct barrier_run {
  unsigned long long repetition_ns[barrier_kinds][repetitions];  // rank 0's, process 0's
  int ranks_counted_right;  // ranks of this GPU that passed every barrier they entered
};

__global__ void __launch_bounds__(threads_per_rank) barrier_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  barrier_run* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);

  int passed = 0;
  for (int kind = 0; kind < barrier_kinds; ++kind) {
    const dcuda_comm comm = kind == device_barrier ? DCUDA_COMM_DEVICE : DCUDA_COMM_WORLD;
    for (int repetition = -1; repetition < repetitions; ++repetition) {
      const int count = repetition < 0 ? warmup : barriers;
      const std::uint64_t start = dcuda::device::global_time_ns();
      for (int i = 0; i < count; ++i) {
        dcuda_comm_barrier(gst, comm);
        ++passed;
      }
      if (rank == 0 && threadIdx.x == 0 && repetition >= 0) {
        run->repetition_ns[kind][repetition] = dcuda::device::global_time_ns() - start;
      }
    }
  }
  if (threadIdx.x == 0 && passed == barrier_kinds * (warmup + repetitions * barriers)) {
    atomicAdd(&run->ranks_counted_right, 1);
  }
  dcuda_gpu_finish(gst);
}

// The references' kernels: the same blocks and threads as the ranks of one GPU.
__global__ void grid_sync_kernel(int count, unsigned long long* repetition_ns) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int syncs = repetition < 0 ? warmup : count;
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int i = 0; i < syncs; ++i) grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0 && repetition >= 0) {
      repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }
}

__global__ void empty_kernel() {}

// Microseconds per grid.sync() of `blocks` x threads_per_rank threads.
double grid_sync_us(int blocks) {
  const device_bytes times(repetitions * sizeof(unsigned long long));
  auto* repetition_ns = times.get<unsigned long long>();
  int count = barriers;
  void* arguments[] = {&count, &repetition_ns};
  BENCH_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(grid_sync_kernel),
                                               dim3(blocks), dim3(threads_per_rank), arguments));
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned long long> ns(repetitions);
  BENCH_CUDA_CHECK(cudaMemcpy(ns.data(), repetition_ns, times.size(), cudaMemcpyDeviceToHost));
  std::vector<double> per_sync;
  for (const unsigned long long t : ns) per_sync.push_back(static_cast<double>(t) / barriers / 1e3);
  return median(per_sync);
}

// Microseconds per step of `blocks` x threads_per_rank empty kernels on one stream; with
// `mpi_barrier`, each step also waits for its kernel and meets the other processes in
// MPI_Barrier (the MPI-CUDA baselines' barrier).
double kernel_step_us(const mpi_world& world, int blocks, bool mpi_barrier) {
  const owned_stream owned;
  const cudaStream_t stream = owned.get();
  const int steps = mpi_barrier ? barriers / 4 : barriers;  // MPI steps are slower
  std::vector<double> per_step;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int count = repetition < 0 ? warmup : steps;
    world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
    const double start = MPI_Wtime();
    for (int i = 0; i < count; ++i) {
      empty_kernel<<<blocks, threads_per_rank, 0, stream>>>();
      BENCH_CUDA_CHECK(cudaGetLastError());
      if (mpi_barrier) {
        BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
        world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
      }
    }
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    const double us = (MPI_Wtime() - start) * 1e6 / count;
    if (repetition >= 0) per_step.push_back(world.from_process0(us));
  }
  return median(per_step);
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  const options command_line =
      parse_options(argc, argv, benchmark,
                    "latency of dcuda_comm_barrier on DCUDA_COMM_DEVICE and DCUDA_COMM_WORLD with "
                    "every resident rank; run it as mpirun -np P, one process per GPU (P >= 1)");
  if (skip_for(world, world.one_node() ? gpu_shortage(world, world.processes())
                                       : "the processes run on more than one node; this "
                                         "benchmark measures the GPUs of one node"))
    return 0;

  std::optional<report> out;  // process 0 only
  int ranks_per_gpu = 0, ranks = 0;
  // Microseconds per barrier of each kind, one figure per repetition, from one dcuda context.
  const auto measure = [&](const std::vector<std::string>& settings) {
    barrier_run run{};
    {
      dcuda_session session(command_line, barrier_kernel, threads_per_rank, settings);
      const dcuda_rank_info& info = session.rank_info();
      ranks_per_gpu = info.rank_responsible;
      ranks = info.rank_count;
      if (world.prints() && !out) out.emplace(benchmark, command_line, current_device());
      session.run(run);
    }
    if (run.ranks_counted_right != ranks_per_gpu) {
      fail_job(benchmark, "process " + std::to_string(world.process()) + ": " +
                              std::to_string(ranks_per_gpu - run.ranks_counted_right) + " of its " +
                              std::to_string(ranks_per_gpu) +
                              " ranks passed another number of barriers than they entered");
    }
    std::vector<std::vector<double>> us(barrier_kinds);
    for (int kind = 0; kind < barrier_kinds; ++kind) {
      for (const unsigned long long ns : run.repetition_ns[kind]) {
        us[static_cast<std::size_t>(kind)].push_back(static_cast<double>(ns) / barriers / 1e3);
      }
    }
    return us;
  };
  const std::vector<std::vector<double>> dcuda_us = measure({});
  if (world.processes() > 1) require_distinct_gpus(world);
  std::optional<double> through_hosts;
  if (world.processes() > 1) {
    through_hosts = median(measure({"--dcuda-host-world-barrier=1"})[world_barrier]);
  }
  const double grid_sync = grid_sync_us(ranks_per_gpu);
  const double kernel_boundary = kernel_step_us(world, ranks_per_gpu, false);
  const double mpi_cuda_barrier = kernel_step_us(world, ranks_per_gpu, true);

  if (!world.prints()) return 0;
  const std::string device_title = "dcuda_comm_barrier(DCUDA_COMM_DEVICE), " +
                                   std::to_string(ranks_per_gpu) + " ranks of one GPU";
  const std::string world_title = "dcuda_comm_barrier(DCUDA_COMM_WORLD), " + std::to_string(ranks) +
                                  " ranks on " + std::to_string(world.processes()) + " GPU(s)";
  const double device_figure = median(dcuda_us[device_barrier]);
  out->print({device_title,
              "us",
              "grid.sync",
              "cooperative_groups grid.sync() of a cooperative kernel, the same blocks and "
              "threads",
              ranks_per_gpu,
              threads_per_rank,
              ranks_per_gpu,
              {{0, device_figure, grid_sync}}});
  out->print({device_title,
              "us",
              "kernel boundary",
              "back-to-back empty kernels of the same blocks and threads on one stream, per "
              "kernel",
              ranks_per_gpu,
              threads_per_rank,
              ranks_per_gpu,
              {{0, device_figure, kernel_boundary}}});
  out->print({world_title,
              "us",
              "MPI-CUDA barrier",
              "per step: an empty kernel, cudaStreamSynchronize, MPI_Barrier among the " +
                  std::to_string(world.processes()) + " processes",
              ranks,
              threads_per_rank,
              ranks_per_gpu,
              {{0, median(dcuda_us[world_barrier]), mpi_cuda_barrier}}});
  if (through_hosts) {
    out->print({world_title,
                "us",
                "dcuda through the hosts",
                "dcuda_comm_barrier(DCUDA_COMM_WORLD) of the same ranks with "
                "--dcuda-host-world-barrier=1: device barrier, host proxies, MPI, device barrier",
                ranks,
                threads_per_rank,
                ranks_per_gpu,
                {{0, median(dcuda_us[world_barrier]), *through_hosts}}});
  }
  out->write_json();
  return 0;
}
