// remote_bandwidth: thesis table 5.4, rows 3-6 (bandwidth of notified access between ranks of
// two GPUs): `mpirun -np 2 remote_bandwidth`, one process per GPU of one node. Every resident rank
// runs (1024 threads each); process 0 owns world ranks [0, n0), process 1 [n0, n0 + n1).
//
//   one pair   world rank 0 (process 0) sends to world rank n0, the first rank of process 1; the
//              other ranks idle
//   all ranks  rank r of process 0 sends to rank n0 + r of process 1, for r < min(n0, n1), all
//              at once: one direction, GPU 0 -> GPU 1, as the cudaMemcpyPeer reference
//
// As local_bandwidth: a pass is K dcuda_put_notify of `size` bytes back to back per sender, to
// rotating offsets of its target's window, answered by one dcuda_notify per receiver; rank 0
// times each repetition of passes between two barriers of all ranks of both GPUs. Bandwidth is
// payload bytes / time (1 GB = 1e9 B), the median of 7 repetitions; receivers check the bytes
// they received. It runs twice: peer path (the default between GPUs of one node: peer stores over
// NVLink) and network path (--dcuda-force-network=1: host proxies and MPI).
//
// References, same program run, measured between the dcuda sessions:
//   peer path     peer_memcpy_bandwidth.cuh: cudaMemcpyAsync from GPU 0 into GPU 1's memory
//                 (cudaMemcpyPeer) of the bytes of one pass (>= 256 MiB from 1 MiB on, <= 1 GiB)
//   network path  mpi_ping_pong.h: MPI bandwidth between host buffers of the same two processes,
//                 messages of the same size (osu_bw style)
//
// To look at one case (e.g. with DCUDA_NETWORK_TRACE): --path=peer|network, --senders=one|all,
// --sizes=S1,S2,... measure only those; such a run checks no target and writes
// remote_bandwidth_partial.json, never the full run's file.
#include <cstdlib>
#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/notified_passes.cuh"
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "dcuda/detail/device/clock.cuh"
#include "reference/mpi_ping_pong.h"
#include "reference/peer_memcpy_bandwidth.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "remote_bandwidth";
// Bandwidth wants many threads per rank (as local_bandwidth; the launch bound lets a 1024-thread
// rank fit on a multiprocessor).
constexpr int threads_per_rank = 1024;

enum class path { peer, network };
enum class senders : int { one_pair, all_ranks };

// What a run measures: everything, unless the command line narrows it.
struct selection {
  bool paths[2] = {true, true};    // [path]
  bool senders[2] = {true, true};  // [senders]
  std::vector<std::size_t> sizes = message_sizes();
  bool partial = false;

  bool measures(path p) const { return paths[static_cast<int>(p)]; }
  bool measures(enum senders who) const { return senders[static_cast<int>(who)]; }
};

// --option=first|second: only the one named is measured (flags are indexed as the enum).
void choose_one(const char* option, const std::string& value, const char* first, const char* second,
                bool (&flags)[2]) {
  if (value != first && value != second) {
    std::fprintf(stderr, "%s: %s=%s: expected %s or %s\n", benchmark, option, value.c_str(), first,
                 second);
    std::exit(2);
  }
  flags[0] = value == first;
  flags[1] = value == second;
}

// Takes --path, --senders and --sizes out of the arguments meant for dcuda.
selection select_cases(options& command_line) {
  selection chosen;
  std::vector<std::string> rest;
  const auto value_of = [](const std::string& argument, const std::string& name) {
    return argument.rfind(name + "=", 0) == 0 ? argument.substr(name.size() + 1) : std::string();
  };
  for (const std::string& argument : command_line.dcuda_arguments) {
    if (const std::string v = value_of(argument, "--path"); !v.empty()) {
      choose_one("--path", v, "peer", "network", chosen.paths);
    } else if (const std::string w = value_of(argument, "--senders"); !w.empty()) {
      choose_one("--senders", w, "one", "all", chosen.senders);
    } else if (const std::string list = value_of(argument, "--sizes"); !list.empty()) {
      chosen.sizes = parse_message_sizes(list, benchmark);
    } else {
      rest.push_back(argument);
      continue;
    }
    chosen.partial = true;
  }
  command_line.dcuda_arguments = rest;
  return chosen;
}

const char* path_name(path p) {
  return p == path::peer ? "peer path (NVLink)"
                         : "network path (--dcuda-force-network=1: host proxies and MPI)";
}

// Both processes compute the same plan from the same arguments.
transfer_plan plan_for(path p, senders who, std::size_t size, int pairs) {
  const bool all = who == senders::all_ranks;
  const std::size_t sending_ranks = all ? static_cast<std::size_t>(pairs) : 1;
  transfer_plan plan{};
  // A pass moves at most 64 MiB with one pair and ~512 MiB over all senders: 256 puts per
  // sender while they are small, fewer as they grow (16 puts of 4 MiB for one pair).
  const std::size_t per_sender = all ? std::max(size, 512 * MiB / sending_ranks) : 64 * MiB;
  plan.puts_per_pass = static_cast<int>(std::clamp<std::size_t>(per_sender / size, 1, 256));
  // Every put of a pass has a slot of its own: each receiver gets up to 64 MiB of distinct
  // destinations with one pair, ~512 MiB over all receivers with all ranks, beyond the L2 cache.
  plan.slots = plan.puts_per_pass;
  plan.pass_bytes = sending_ranks * static_cast<std::size_t>(plan.puts_per_pass) * size;
  // A repetition moves ~1 GiB (one pair) or ~8 GiB (all ranks) over NVLink, ~256 MiB or ~1 GiB
  // over the network; it makes at most 20000 puts per sender over NVLink and 20000 puts in all
  // through the host proxies, which bounds the time of small sizes.
  const std::size_t repetition_bytes =
      p == path::peer ? (all ? 8 * GiB : GiB) : (all ? GiB : 256 * MiB);
  const std::size_t puts =
      p == path::peer ? 20000 : std::max<std::size_t>(1, 20000 / sending_ranks);
  const std::size_t by_bytes = repetition_bytes / plan.pass_bytes;
  const std::size_t by_puts = puts / static_cast<std::size_t>(plan.puts_per_pass);
  plan.passes = static_cast<int>(std::max<std::size_t>(1, std::min(by_bytes, by_puts)));
  plan.warmup_passes = std::max(1, plan.passes / 4);
  plan.window_bytes = 2 * static_cast<std::size_t>(plan.slots) * size;
  return plan;
}

// What one dcuda_host_run measures, and its results (the user data of the run; each process
// passes its own).
struct bandwidth_run {
  senders who;
  int size;
  transfer_plan plan;
  int first_remote;        // n0: the world rank of process 1's first rank
  int pairs;               // min(n0, n1): senders of the all-ranks pattern
  unsigned char* windows;  // this process's rank d exposes its window at d * window_stride
  std::size_t window_stride;
  unsigned long long repetition_ns[repetitions];  // written by world rank 0
  int mismatches;                                 // receivers of this process with wrong bytes
};

__global__ void __launch_bounds__(threads_per_rank) bandwidth_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  bandwidth_run* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int world_rank = 0;
  int device_rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &world_rank);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  const int size = run->size;
  const transfer_plan plan = run->plan;

  const bool first_process = world_rank == device_rank;  // process 0 owns [0, n0)
  const int pairs = run->who == senders::all_ranks ? run->pairs : 1;
  const bool sends = first_process && device_rank < pairs;
  const bool receives = !first_process && device_rank < pairs;
  const int target = run->first_remote + device_rank;  // of a sender
  const int origin = device_rank;                      // of a receiver: rank d of process 0
  unsigned char* window =
      sends || receives ? run->windows + static_cast<std::size_t>(device_rank) * run->window_stride
                        : nullptr;
  // Barriers are made by every rank of both GPUs; world rank 0 times.
  run_notified_passes(gst, pass_role{sends, receives, target, origin, world_rank == 0}, plan, size,
                      window, world_rank, run->repetition_ns, &run->mismatches);
  dcuda_gpu_finish(gst);
}

// dcuda's figures of one path (process 0's timings), by pattern and size.
struct dcuda_figures {
  int ranks = 0;  // world ranks: n0 + n1
  int first_remote = 0;
  int pairs = 0;
  std::vector<double> gigabytes_per_second[2];  // [senders], one per size
};

// One dcuda session over both processes: both patterns, every size. No MPI while the session
// lives; the data checks of both processes are combined after it. The report is created with the
// first session.
dcuda_figures measure_dcuda(const mpi_world& world, const options& command_line,
                            const selection& chosen, path p, std::optional<report>& out) {
  std::vector<std::string> settings;
  if (p == path::network) settings.emplace_back("--dcuda-force-network=1");
  const std::vector<std::size_t>& sizes = chosen.sizes;
  dcuda_figures figures;
  std::vector<int> mismatches;
  {
    dcuda_session session(command_line, bandwidth_kernel, threads_per_rank, settings);
    const dcuda_rank_info& info = session.rank_info();
    const int n0 = world.process() == 0 ? info.rank_responsible : info.rank_start;
    const int n1 = info.rank_count - n0;
    if (info.process_count != 2 || info.process_index != world.process() ||
        info.rank_start != (world.process() == 0 ? 0 : n0) || n0 < 1 || n1 < 1) {
      fail_job(benchmark, "dcuda reports " + describe_rank_info(info) + " to MPI process " +
                              std::to_string(world.process()) +
                              "; expected 2 processes, numbered as in MPI_COMM_WORLD (the "
                              "multi-process runtime)");
    }
    if (world.prints() && !out) {
      out.emplace(chosen.partial ? std::string(benchmark) + "_partial" : std::string(benchmark),
                  command_line, current_device());
    }
    figures.ranks = info.rank_count;
    figures.first_remote = n0;
    figures.pairs = std::min(n0, n1);

    // One allocation holds the windows of either pattern, laid out for its largest plan.
    const auto window_stride = [&](senders who) {
      std::size_t stride = 0;
      for (const std::size_t size : sizes) {
        stride = std::max(stride, plan_for(p, who, size, figures.pairs).window_bytes);
      }
      return stride;
    };
    const device_bytes windows(
        std::max(window_stride(senders::one_pair),
                 static_cast<std::size_t>(figures.pairs) * window_stride(senders::all_ranks)));

    for (const senders who : {senders::one_pair, senders::all_ranks}) {
      if (!chosen.measures(who)) continue;
      for (const std::size_t size : sizes) {
        bandwidth_run run{};
        run.who = who;
        run.size = static_cast<int>(size);
        run.plan = plan_for(p, who, size, figures.pairs);
        run.first_remote = n0;
        run.pairs = figures.pairs;
        run.windows = windows.get();
        run.window_stride = window_stride(who);
        BENCH_CUDA_CHECK(cudaMemset(windows.get(), 0, windows.size()));
        BENCH_CUDA_CHECK(cudaDeviceSynchronize());
        session.run(run);
        mismatches.push_back(run.mismatches);
        std::vector<double> rates;
        for (const unsigned long long ns : run.repetition_ns) {
          rates.push_back(static_cast<double>(run.plan.pass_bytes) * run.plan.passes /
                          static_cast<double>(ns));  // bytes per ns = GB/s
        }
        figures.gigabytes_per_second[static_cast<int>(who)].push_back(median(rates));
      }
    }
  }
  const std::vector<int> wrong = world.sum_each(mismatches);
  for (std::size_t i = 0; i < wrong.size(); ++i) {
    if (wrong[i] != 0) {
      fail_job(benchmark, std::to_string(wrong[i]) + " rank(s) received wrong data (" +
                              std::to_string(sizes[i % sizes.size()]) + " B, run " +
                              std::to_string(i / sizes.size() + 1) + " of its session, " +
                              path_name(p) + ")");
    }
  }
  return figures;
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  options command_line =
      parse_options(argc, argv, benchmark,
                    "bandwidth of notified access between the GPUs of 2 processes, peer and "
                    "network path (thesis table 5.4); run it as mpirun -np 2");
  const selection chosen = select_cases(command_line);
  if (skip_without_two_gpus(world, /*one_node=*/true)) return 0;

  std::optional<report> out;  // process 0 only
  const std::vector<std::size_t>& sizes = chosen.sizes;
  const auto title = [&](path p, senders who, const dcuda_figures& figures) {
    const std::string n0 = std::to_string(figures.first_remote);
    return std::string("notified access bandwidth over the ") + path_name(p) +
           (who == senders::one_pair
                ? ", one pair (world rank 0 on GPU 0 -> world rank " + n0 + " on GPU 1) of " +
                      std::to_string(figures.ranks) + " ranks"
                : ", all " + std::to_string(figures.pairs) +
                      " ranks of GPU 0 send at once (rank r -> rank " + n0 + " + r on GPU 1) of " +
                      std::to_string(figures.ranks) + " ranks");
  };
  std::vector<table> tables;

  // Peer path: dcuda, then cudaMemcpyPeer between the same two GPUs.
  double lowest_peer_ratio = std::numeric_limits<double>::infinity();
  if (chosen.measures(path::peer)) {
    const dcuda_figures peer = measure_dcuda(world, command_line, chosen, path::peer, out);
    require_distinct_gpus(world);
    peer_memcpy_reference reference(world, GiB);
    for (const senders who : {senders::one_pair, senders::all_ranks}) {
      if (!chosen.measures(who)) continue;
      table& results = tables.emplace_back(
          table{title(path::peer, who, peer),
                "GB/s",
                "cudaMemcpyPeer",
                "cudaMemcpyAsync from GPU 0 into GPU 1's memory mapped with CUDA IPC (as "
                "cudaMemcpyPeerAsync), the bytes of one pass (>= 256 MiB from 1 MiB on, <= 1 GiB)",
                peer.ranks,
                threads_per_rank,
                0,
                {}});
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const transfer_plan plan = plan_for(path::peer, who, sizes[i], peer.pairs);
        const double copy =
            reference.gigabytes_per_second(reference_copy_bytes(sizes[i], plan.pass_bytes));
        results.rows.push_back(
            {sizes[i], peer.gigabytes_per_second[static_cast<int>(who)][i], copy});
        if (who == senders::all_ranks && sizes[i] >= MiB) {
          lowest_peer_ratio = std::min(lowest_peer_ratio, results.rows.back().dcuda / copy);
        }
      }
    }
  }

  // Network path: dcuda, then MPI between host buffers of the same two processes.
  double network_one_pair_ratio = 0;
  if (chosen.measures(path::network)) {
    const dcuda_figures network = measure_dcuda(world, command_line, chosen, path::network, out);
    std::vector<double> mpi_reference;
    for (const std::size_t size : sizes) {
      const mpi_result result = mpi_host_bandwidth(world, size);
      if (!result.data_arrived) {
        fail_job(benchmark, "MPI reference: wrong data received (" + std::to_string(size) + " B)");
      }
      mpi_reference.push_back(result.value);
    }
    for (const senders who : {senders::one_pair, senders::all_ranks}) {
      if (!chosen.measures(who)) continue;
      table& results = tables.emplace_back(table{
          title(path::network, who, network),
          "GB/s",
          "MPI host",
          "MPI_Isend/MPI_Irecv windows of host-buffer messages of the same size between the same "
          "2 processes, process 0 -> process 1 (osu_bw style)",
          network.ranks,
          threads_per_rank,
          0,
          {}});
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        results.rows.push_back(
            {sizes[i], network.gigabytes_per_second[static_cast<int>(who)][i], mpi_reference[i]});
      }
      if (who == senders::one_pair) {
        network_one_pair_ratio = results.rows.back().dcuda / results.rows.back().reference;
      }
    }
  }

  if (!world.prints()) return 0;
  for (const table& results : tables) out->print(results);
  if (!chosen.partial) {
    // Our issue's targets: all ranks over NVLink reach 90% of cudaMemcpyPeer from 1 MiB on; one
    // pair over the network path reaches 70% of what MPI moves between host buffers at 4 MiB
    // (the like-for-like comparison: one stream between the two processes).
    out->check({"peer path, all-ranks bandwidth / cudaMemcpyPeer, lowest over sizes >= 1 MiB",
                "ratio", lowest_peer_ratio, 0.9, false});
    out->check({"network path, one-pair bandwidth / MPI host-buffer bandwidth, 4 MiB", "ratio",
                network_one_pair_ratio, 0.7, false});
  }
  out->write_json();
  return 0;
}
