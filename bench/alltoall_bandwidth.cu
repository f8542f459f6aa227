// alltoall_bandwidth: aggregate bandwidth of notified access when every rank of every GPU of a
// node sends at once, to every other GPU (weak scaling to 8 GPUs): `mpirun -np P
// alltoall_bandwidth`, one process per GPU of one node, P = 2..8. Every resident rank runs (1024
// threads each); process g owns world ranks [g * R, (g + 1) * R).
//
// A pass (common/alltoall_schedule.h, common/alltoall_passes.cuh): rank r of GPU g puts K
// messages of `size` bytes to rank r of each other GPU g + s (mod P), s = 1..P-1, interleaved so
// that all links are busy at once, each origin into an area of its own at the receiver; then it
// waits for the K * (P - 1) puts of its origins (rank r of each GPU g - s), answers each origin
// with one dcuda_notify and waits for its own P - 1 answers. World rank 0 times each repetition of
// passes between two barriers of all ranks of all GPUs. Bandwidth is the payload of all ranks of
// all GPUs / time (1 GB = 1e9 B), the median of 7 repetitions; every receiver checks the bytes of
// every origin. Peer path only (GPUs of one node, peer stores over NVLink).
//
// Reference, same program run, measured after the dcuda session: peer_memcpy_alltoall.cuh, every
// process copies with cudaMemcpyAsync into every other GPU's memory mapped with CUDA IPC, one
// stream per destination, all at once between MPI barriers: per destination the bytes one GPU
// sends each other GPU in a pass (>= 256 MiB from 1 MiB on, <= 1 GiB).
//
// To look at one case: --sizes=S1,S2,... measures only those; such a run writes
// alltoall_bandwidth_partial.json, never the full run's file.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/alltoall_passes.cuh"
#include "common/alltoall_schedule.h"
#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/notified_passes.cuh"  // reference_copy_bytes
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "reference/peer_memcpy_alltoall.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "alltoall_bandwidth";
// Bandwidth wants many threads per rank (as remote_bandwidth; the launch bound lets a 1024-thread
// rank fit on a multiprocessor).
constexpr int threads_per_rank = 1024;
// Below 4 KiB a pass is latency-bound; the small sizes are remote_bandwidth's.
constexpr std::size_t smallest_message = 4 * KiB;

// What a run measures: every size, unless --sizes narrows it.
struct selection {
  std::vector<std::size_t> sizes = message_sizes(smallest_message);
  bool partial = false;
};

// Takes --sizes out of the arguments meant for dcuda.
selection select_cases(options& command_line) {
  selection chosen;
  std::vector<std::string> rest;
  const std::string prefix = "--sizes=";
  for (const std::string& argument : command_line.dcuda_arguments) {
    if (argument.rfind(prefix, 0) != 0) {
      rest.push_back(argument);
      continue;
    }
    chosen.sizes = parse_message_sizes(argument.substr(prefix.size()), benchmark);
    chosen.partial = true;
  }
  command_line.dcuda_arguments = rest;
  return chosen;
}

// Every process computes the same plan from the same arguments.
alltoall_plan plan_for(std::size_t size, int gpus, int ranks_per_gpu) {
  const std::size_t targets = static_cast<std::size_t>(gpus - 1);
  const std::size_t ranks = static_cast<std::size_t>(ranks_per_gpu);
  alltoall_plan plan{};
  // A pass: each GPU sends ~512 MiB over its ranks (as remote_bandwidth's all-ranks GPU 0),
  // split over its P - 1 targets; beyond the L2 cache at every receiver. At most 256 puts per
  // rank while they are small (the answers' latency is spread over many puts), at least one per
  // target as they grow.
  const std::size_t per_target = std::max(size, 512 * MiB / (ranks * targets));
  const std::size_t most_puts = std::max<std::size_t>(1, 256 / targets);
  const int puts_per_target =
      static_cast<int>(std::clamp<std::size_t>(per_target / size, 1, most_puts));
  // A window (P areas of K * size <= max(size, 512 MiB / (P - 1)) bytes) stays within 1 GiB,
  // which dcuda_win_create's int size and the int offsets of the schedule hold.
  plan.schedule = alltoall_schedule{gpus, ranks_per_gpu, puts_per_target, static_cast<int>(size)};
  plan.pass_bytes = static_cast<std::size_t>(gpus) * ranks * targets *
                    static_cast<std::size_t>(puts_per_target) * size;
  // A repetition moves ~8 GiB over all links (as remote_bandwidth's all ranks), at least one
  // pass; a rank makes at most 20000 puts in it, which bounds the time of small sizes.
  const std::size_t by_bytes = 8 * GiB / plan.pass_bytes;
  const std::size_t by_puts = 20000 / static_cast<std::size_t>(plan.schedule.puts_per_pass());
  plan.passes = static_cast<int>(std::max<std::size_t>(1, std::min(by_bytes, by_puts)));
  plan.warmup_passes = std::max(1, plan.passes / 4);
  return plan;
}

// Bytes that one GPU sends to each other GPU in a pass: what the reference copies per
// destination (reference_copy_bytes bounds it).
std::size_t pair_bytes(const alltoall_plan& plan) {
  const alltoall_schedule& schedule = plan.schedule;
  return static_cast<std::size_t>(schedule.ranks_per_gpu) *
         static_cast<std::size_t>(schedule.area_bytes());
}

// What one dcuda_host_run measures, and its results (the user data of the run; each process
// passes its own).
struct alltoall_run {
  alltoall_plan plan;
  int gpu;                 // this process's index: its GPU in the schedule
  unsigned char* windows;  // this process's rank d exposes its window at d * window_stride
  std::size_t window_stride;
  unsigned long long repetition_ns[repetitions];  // written by world rank 0
  int mismatches;                                 // origin areas of this process with wrong bytes
};

__global__ void __launch_bounds__(threads_per_rank) alltoall_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  alltoall_run* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int world_rank = 0;
  int device_rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &world_rank);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  const alltoall_plan plan = run->plan;
  unsigned char* window =
      device_rank < plan.schedule.ranks_per_gpu
          ? run->windows + static_cast<std::size_t>(device_rank) * run->window_stride
          : nullptr;
  // Barriers are made by every rank of every GPU; world rank 0 times.
  run_alltoall_passes(gst, plan, run->gpu, device_rank, world_rank == 0, window, run->repetition_ns,
                      &run->mismatches);
  dcuda_gpu_finish(gst);
}

// dcuda's figures (process 0's timings), one per size.
struct dcuda_figures {
  int ranks = 0;  // world ranks: P * R
  int ranks_per_gpu = 0;
  std::vector<double> gigabytes_per_second;
};

// One dcuda session over all processes, every size. No MPI while the session lives; the data
// checks of all processes are combined after it. The report is created with the session.
dcuda_figures measure_dcuda(const mpi_world& world, const options& command_line,
                            const selection& chosen, std::optional<report>& out) {
  const std::vector<std::size_t>& sizes = chosen.sizes;
  const int gpus = world.processes();
  dcuda_figures figures;
  std::vector<int> mismatches;
  {
    dcuda_session session(command_line, alltoall_kernel, threads_per_rank);
    const dcuda_rank_info& info = session.rank_info();
    // The schedule numbers rank r of GPU g as g * R + r: every GPU must run R ranks. GPUs of
    // one node of one model do; otherwise DCUDA_RANKS_PER_DEVICE makes them equal.
    const int ranks_per_gpu = info.rank_responsible;
    if (info.process_count != gpus || info.process_index != world.process() ||
        info.rank_count != gpus * ranks_per_gpu ||
        info.rank_start != world.process() * ranks_per_gpu || ranks_per_gpu < 1) {
      fail_job(benchmark, "dcuda reports " + describe_rank_info(info) + " to MPI process " +
                              std::to_string(world.process()) + "; expected " +
                              std::to_string(gpus) +
                              " processes, numbered as in MPI_COMM_WORLD, each with the same "
                              "number of ranks (set DCUDA_RANKS_PER_DEVICE if the GPUs differ)");
    }
    if (world.prints()) {
      out.emplace(chosen.partial ? std::string(benchmark) + "_partial" : std::string(benchmark),
                  command_line, current_device());
    }
    figures.ranks = info.rank_count;
    figures.ranks_per_gpu = ranks_per_gpu;

    // One allocation holds the windows of every size, laid out for the largest.
    std::size_t window_stride = 0;
    for (const std::size_t size : sizes) {
      window_stride = std::max(
          window_stride,
          static_cast<std::size_t>(plan_for(size, gpus, ranks_per_gpu).schedule.window_bytes()));
    }
    const device_bytes windows(static_cast<std::size_t>(ranks_per_gpu) * window_stride);

    for (const std::size_t size : sizes) {
      alltoall_run run{};
      run.plan = plan_for(size, gpus, ranks_per_gpu);
      run.gpu = world.process();
      run.windows = windows.get();
      run.window_stride = window_stride;
      BENCH_CUDA_CHECK(cudaMemset(windows.get(), 0, windows.size()));
      BENCH_CUDA_CHECK(cudaDeviceSynchronize());
      session.run(run);
      mismatches.push_back(run.mismatches);
      std::vector<double> rates;
      for (const unsigned long long ns : run.repetition_ns) {
        rates.push_back(static_cast<double>(run.plan.pass_bytes) * run.plan.passes /
                        static_cast<double>(ns));  // bytes per ns = GB/s
      }
      figures.gigabytes_per_second.push_back(median(rates));
    }
  }
  const std::vector<int> wrong = world.sum_each(mismatches);
  for (std::size_t i = 0; i < wrong.size(); ++i) {
    if (wrong[i] != 0) {
      fail_job(benchmark, std::to_string(wrong[i]) +
                              " (receiving rank, origin) pair(s) received wrong data (" +
                              std::to_string(sizes[i]) + " B, " + std::to_string(gpus) + " GPUs)");
    }
  }
  return figures;
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  options command_line = parse_options(
      argc, argv, benchmark,
      "aggregate bandwidth of notified access when every rank of every GPU of one node sends to "
      "every other GPU at once, peer path; run it as mpirun -np P, one process per GPU");
  const selection chosen = select_cases(command_line);
  if (skip_without_a_gpu_per_process(world)) return 0;

  std::optional<report> out;  // process 0 only
  const std::vector<std::size_t>& sizes = chosen.sizes;
  const int gpus = world.processes();
  const dcuda_figures figures = measure_dcuda(world, command_line, chosen, out);
  require_distinct_gpus(world);

  std::size_t largest_copy = 1;
  for (const std::size_t size : sizes) {
    const alltoall_plan plan = plan_for(size, gpus, figures.ranks_per_gpu);
    largest_copy = std::max(largest_copy, reference_copy_bytes(size, pair_bytes(plan)));
  }
  peer_memcpy_alltoall reference(world, largest_copy);
  table results{"all-to-all notified access bandwidth over the peer path (NVLink), " +
                    std::to_string(gpus) +
                    " GPUs: every rank r of every GPU sends to rank r of "
                    "each other GPU at once (" +
                    std::to_string(figures.ranks_per_gpu) + " ranks per GPU, " +
                    std::to_string(figures.ranks) + " ranks)",
                "GB/s",
                "cudaMemcpy all-to-all",
                "cudaMemcpyAsync from each GPU into every other GPU's memory mapped with CUDA IPC, "
                "one stream per destination, all at once between MPI barriers; per destination "
                "the bytes one GPU sends each other GPU in a pass (>= 256 MiB from 1 MiB on, "
                "<= 1 GiB)",
                figures.ranks,
                threads_per_rank,
                0,
                {}};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const alltoall_plan plan = plan_for(sizes[i], gpus, figures.ranks_per_gpu);
    const double copy =
        reference.gigabytes_per_second(reference_copy_bytes(sizes[i], pair_bytes(plan)));
    results.rows.push_back({sizes[i], figures.gigabytes_per_second[i], copy});
  }

  if (!world.prints()) return 0;
  out->print(results);
  out->write_json();
  return 0;
}
