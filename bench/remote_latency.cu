// remote_latency: thesis table 5.1, rows 2, 3, 5 and 6 (notified access and notify between ranks
// of two GPUs): `mpirun -np 2 remote_latency`, one process per GPU of one node.
//
// Each GPU runs one rank (--dcuda-ranks-per-device=1), so world rank 0 is process 0's rank and
// world rank 1 is the first (and only) rank of process 1. They ping-pong as in local_latency:
// rank 0 sends (dcuda_put_notify of `size` bytes, 1 B .. 4 MiB, or dcuda_notify) and waits for
// the answer (dcuda_wait_notifications); rank 1 mirrors it. Rank 0 times each repetition of round
// trips with its GPU's global timer; one-way latency is round trip / 2, the median of 7
// repetitions. Receivers check the bytes they received. It runs twice:
//
//   peer path     the default between GPUs of one node: peer stores over NVLink
//   network path  --dcuda-force-network=1: the host proxies carry the operations over MPI
//
// References, same program run, measured between the dcuda sessions (where the program may use
// MPI itself):
//   peer path     peer_flag_ping_pong.cuh: one block per GPU ping-pongs a counter through CUDA
//                 IPC-mapped memory, the payload copied by the block with peer stores
//   network path  mpi_ping_pong.h: MPI ping-pong of host buffers of the same size between the
//                 same 2 processes; and mapped_flag_round_trip.cuh, the device -> host -> device
//                 round trip, for the target 4 B <= host round trip + MPI 4 B one way + 2 us
//
// If $DCUDA_NVSHMEM_RESULT names the JSON file of nvshmem_latency (run before, in the same device
// session), its 512-thread figures are printed beside dcuda's peer figures as one more table; so
// are the LSA flag figures of nccl_latency (NCCL's device API) where $DCUDA_NCCL_RESULT names its
// JSON file.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/anchor_figures.h"
#include "common/dcuda_session.h"
#include "common/ipc_buffer.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/notified_ping_pong.cuh"
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "dcuda/detail/device/clock.cuh"
#include "reference/mapped_flag_round_trip.cuh"
#include "reference/mpi_ping_pong.h"
#include "reference/fence_cost.cuh"
#include "reference/peer_flag_ping_pong.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "remote_latency";
// One rank per GPU; as NVSHMEM's anchor and the reference, 512 threads.
constexpr int threads_per_rank = 512;

enum class path { peer, network };

const char* path_name(path p) {
  return p == path::peer ? "peer path (NVLink)"
                         : "network path (--dcuda-force-network=1: host proxies and MPI)";
}

// Round trips per repetition. Peer path: 20000, fewer for large messages so that a repetition
// moves at most 128 MiB each way, at least 100. Network path (several us per message): 2000, at
// most 32 MiB each way, at least 20.
int round_trips_for(path p, std::size_t size) {
  if (p == path::peer) return peer_round_trips_for(size);
  const std::size_t capped = size == 0 ? 2000 : 32 * MiB / size;
  return static_cast<int>(std::clamp<std::size_t>(capped, 20, 2000));
}

__global__ void __launch_bounds__(threads_per_rank, 1) latency_kernel(dcuda_context_handle dcuda) {
  run_two_process_ping_pong(dcuda);
}

std::string label_of(operation op, std::size_t size, path p) {
  return (op == operation::notify ? std::string("notify")
                                  : std::to_string(size) + " B put_notify") +
         ", " + path_name(p);
}

// dcuda's figures of one path (process 0's timings): one per size, then notify.
struct dcuda_figures {
  std::vector<double> access_us;
  double notify_us = 0;
  // The range of the repetitions behind each median (bench/regression_guard.py's spread).
  std::vector<one_way_figure> access;
  one_way_figure notify{};
};

// One dcuda context over both processes: every size, then notify. No MPI while the context
// lives; the data checks of both processes are combined after it. The report is created with the
// first context (the device is known once dcuda_host_init has selected it).
dcuda_figures measure_dcuda(const mpi_world& world, const options& command_line, path p,
                            std::optional<report>& out) {
  std::vector<std::string> settings{"--dcuda-ranks-per-device=1"};
  if (p == path::network) settings.emplace_back("--dcuda-force-network=1");
  const std::vector<std::size_t> sizes = message_sizes();
  dcuda_figures figures;
  std::vector<int> mismatches;
  {
    dcuda_session session(command_line, latency_kernel, threads_per_rank, settings);
    const dcuda_rank_info& info = session.rank_info();
    if (info.process_count != 2 || info.process_index != world.process() || info.rank_count != 2 ||
        info.rank_responsible != 1 || info.rank_start != world.process()) {
      fail_job(benchmark, "dcuda reports " + describe_rank_info(info) + " to MPI process " +
                              std::to_string(world.process()) +
                              "; expected 2 processes, numbered as in MPI_COMM_WORLD, with 1 rank "
                              "each (the multi-process runtime)");
    }
    if (world.prints() && !out) out.emplace(benchmark, command_line, current_device());
    const device_bytes window(2 * largest_message);

    const auto measure = [&](operation op, std::size_t size) {
      two_process_latency_run run{};
      run.op = op;
      run.size = static_cast<int>(size);
      run.round_trips = round_trips_for(p, size);
      run.warmup = warmup_for(run.round_trips);
      run.window = window.get();
      BENCH_CUDA_CHECK(cudaMemset(window.get(), 0, window.size()));
      BENCH_CUDA_CHECK(cudaDeviceSynchronize());
      session.run(run);
      mismatches.push_back(run.mismatches);
      return one_way_us(run.repetition_ns, run.round_trips);
    };
    for (const std::size_t size : sizes) {
      figures.access.push_back(measure(operation::put_notify, size));
      figures.access_us.push_back(figures.access.back().median_us);
    }
    figures.notify = measure(operation::notify, 0);
    figures.notify_us = figures.notify.median_us;
  }
  const std::vector<int> wrong = world.sum_each(mismatches);
  for (std::size_t i = 0; i < wrong.size(); ++i) {
    if (wrong[i] != 0) {
      const bool notify = i == sizes.size();
      fail_job(benchmark, "dcuda: wrong data received (" +
                              label_of(notify ? operation::notify : operation::put_notify,
                                       notify ? 0 : sizes[i], p) +
                              ")");
    }
  }
  return figures;
}

double value_at(const table& results, std::size_t size) {
  for (const row& r : results.rows) {
    if (r.size_bytes == size) return r.dcuda;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  const options command_line =
      parse_options(argc, argv, benchmark,
                    "notified access and notify latency between the GPUs of 2 processes, peer and "
                    "network path (thesis table 5.1); run it as mpirun -np 2");
  if (skip_without_two_gpus(world, /*one_node=*/true)) return 0;

  std::optional<report> out;  // process 0 only
  const std::vector<std::size_t> sizes = message_sizes();

  // Peer path: dcuda, then the raw flag ping-pong between the same two GPUs.
  const dcuda_figures peer = measure_dcuda(world, command_line, path::peer, out);
  require_distinct_gpus(world);
  std::vector<double> peer_reference_us;
  double peer_notify_reference_us = 0;
  {
    peer_flag_ping_pong reference(world, largest_message);
    const auto measure = [&](std::size_t size) {
      const int round_trips = round_trips_for(path::peer, size);
      const ping_pong_result result = reference.run(threads_per_rank, static_cast<int>(size),
                                                    warmup_for(round_trips), round_trips);
      if (!result.data_arrived) {
        fail_job(benchmark,
                 "peer flag reference: wrong data received (" + std::to_string(size) + " B)");
      }
      return result.one_way_us;
    };
    for (const std::size_t size : sizes) peer_reference_us.push_back(measure(size));
    peer_notify_reference_us = measure(0);
  }

  // Network path: dcuda, then MPI between the same two processes and the host round trip.
  const dcuda_figures network = measure_dcuda(world, command_line, path::network, out);
  std::vector<double> mpi_us;
  for (const std::size_t size : sizes) {
    const mpi_result result = mpi_host_latency(world, size);
    if (!result.data_arrived) {
      fail_job(benchmark, "MPI reference: wrong data received (" + std::to_string(size) + " B)");
    }
    mpi_us.push_back(result.value);
  }
  const double mpi_empty_us = mpi_host_latency(world, 0).value;
  // The device -> host -> device round trip on process 0's GPU (process 1 waits meanwhile).
  const double round_trip_us = world.from_process0(
      world.prints() ? run_mapped_flag_round_trip(threads_per_rank, 2000, 20000) : 0.0);
  // The model's S (docs/model.md), measured by process 0 while process 1 waits: into the other
  // GPU's memory (peer path) and into pinned host memory (the network path's records).
  std::optional<fence_cost> peer_fence, host_fence;
  {
    ipc_buffer_pair target(world, 2 * fence_cost_detail::line_words * sizeof(unsigned));
    if (world.prints()) {
      peer_fence = measure_fence_cost(reinterpret_cast<unsigned*>(target.peers()));
    }
  }  // ~ipc_buffer_pair: both processes meet before either buffer is freed
  if (world.prints()) {
    unsigned* host_words = nullptr;
    BENCH_CUDA_CHECK(cudaHostAlloc(
        &host_words, 2 * fence_cost_detail::line_words * sizeof(unsigned), cudaHostAllocMapped));
    unsigned* mapped = nullptr;
    BENCH_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, host_words, 0));
    host_fence = measure_fence_cost(mapped);
    BENCH_CUDA_CHECK(cudaFreeHost(host_words));
  }

  if (!world.prints()) return 0;

  const std::string pair = "world rank 0 (process 0) <-> world rank 1 (process 1), 2 GPUs";
  const auto make_table = [&](const std::string& what, path p, const std::string& reference_name,
                              const std::string& detail, int reference_blocks) {
    return table{what + " over the " + path_name(p) + ", one way, " + pair,
                 "us",
                 reference_name,
                 detail,
                 2,
                 threads_per_rank,
                 reference_blocks,
                 {}};
  };
  const std::string peer_detail =
      "flag ping-pong between one " + std::to_string(threads_per_rank) +
      "-thread block on each GPU through CUDA IPC-mapped memory: payload copied with peer "
      "stores, system-scope release store of the counter; relaxed poll, then one acquire load";
  const std::string mpi_detail =
      "MPI_Send/MPI_Recv ping-pong of host buffers of the same size between the same 2 processes";

  table peer_access = make_table("notified access (dcuda_put_notify + dcuda_wait_notifications)",
                                 path::peer, "peer flag", peer_detail, 2);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    peer_access.rows.push_back({sizes[i], peer.access_us[i], peer_reference_us[i],
                                peer.access[i].min_us, peer.access[i].max_us});
  }
  out->print(peer_access);
  table peer_notify = make_table("notify (dcuda_notify + dcuda_wait_notifications)", path::peer,
                                 "peer flag", peer_detail + " (no payload)", 2);
  peer_notify.rows.push_back(
      {0, peer.notify_us, peer_notify_reference_us, peer.notify.min_us, peer.notify.max_us});
  out->print(peer_notify);

  table network_access = make_table("notified access (dcuda_put_notify + dcuda_wait_notifications)",
                                    path::network, "MPI host", mpi_detail, 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    network_access.rows.push_back({sizes[i], network.access_us[i], mpi_us[i],
                                   network.access[i].min_us, network.access[i].max_us});
  }
  out->print(network_access);
  table network_notify =
      make_table("notify (dcuda_notify + dcuda_wait_notifications)", path::network, "MPI host",
                 "MPI_Send/MPI_Recv ping-pong of empty messages between the same 2 processes", 0);
  network_notify.rows.push_back(
      {0, network.notify_us, mpi_empty_us, network.notify.min_us, network.notify.max_us});
  out->print(network_notify);

  // What the network path costs at least: the device's command reaches the host (and the
  // notification the other device) through mapped host memory, one round trip's worth, plus
  // one MPI message between the host proxies.
  const double network_4b = value_at(network_access, 4);
  const auto four_bytes = std::find(sizes.begin(), sizes.end(), std::size_t{4});
  const double mpi_4b = mpi_us[static_cast<std::size_t>(four_bytes - sizes.begin())];
  char parts[200];
  std::snprintf(parts, sizeof parts,
                "device->host->device mapped-flag round trip on process 0's GPU (%.2f us) + MPI "
                "one-way latency of 4 B host messages (%.2f us)",
                round_trip_us, mpi_4b);
  table sum_of_parts = make_table("4 B notified access against its parts", path::network,
                                  "round trip + MPI", parts, 1);
  sum_of_parts.rows.push_back({4, network_4b, round_trip_us + mpi_4b});
  out->print(sum_of_parts);

  // The anchors' figures, where a run of nvshmem_latency (DCUDA_NVSHMEM_RESULT) or of
  // nccl_latency (DCUDA_NCCL_RESULT) left them: each beside dcuda's peer notified access.
  // `anchor`: the reference column; `figures_name`: what the file lacks when it has no table.
  const auto print_against = [&](const char* variable, const std::string& anchor,
                                 const std::vector<std::string>& title_parts,
                                 const std::string& figures_name, const std::string& detail) {
    const char* file = std::getenv(variable);
    if (file == nullptr || file[0] == '\0') return;
    const std::map<std::size_t, double> figures = anchor_figures(file, title_parts);
    // The file's name alone: the results are committed, the folder it was read from is not.
    table against = make_table(
        "notified access (dcuda_put_notify + dcuda_wait_notifications)", path::peer, anchor,
        detail + " (" + std::filesystem::path(file).filename().string() + ")", 2);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const auto found = figures.find(sizes[i]);
      if (found != figures.end()) {
        against.rows.push_back({sizes[i], peer.access_us[i], found->second});
      }
    }
    if (against.rows.empty()) {
      std::printf("# %s=%s holds no %s figures; no %s table\n\n", variable, file,
                  figures_name.c_str(), anchor.c_str());
    } else {
      out->print(against);
    }
  };
  print_against("DCUDA_NVSHMEM_RESULT", "NVSHMEM", {"NVSHMEM", "ping-pong", "512 threads"},
                "NVSHMEM 512-thread ping-pong",
                "NVSHMEM putmem_signal_nbi_block + signal_wait_until ping-pong, one 512-thread "
                "block per GPU, from nvshmem_latency");
  print_against("DCUDA_NCCL_RESULT", "NCCL device API",
                {"NCCL device API", "LSA flag ping-pong", "512 threads"},
                "NCCL device API 512-thread LSA flag ping-pong",
                "NCCL device API ping-pong (payload stored through ncclGetLsaPointer, then a "
                "system-scope release store of a flag in the peer's window; acquire poll), one "
                "512-thread block per GPU, from nccl_latency");

  // A host-proxied operation needs the device -> host and host -> device legs of a round trip:
  // faster than that, the operations did not go through the host proxies.
  if (network_4b < round_trip_us) {
    std::printf(
        "# note: 4 B over the network path (%.2f us) is faster than one host round trip (%.2f "
        "us): did the runtime honour --dcuda-force-network=1?\n\n",
        network_4b, round_trip_us);
  }
  out->print(fence_cost_table(*peer_fence, "peer path", "to the other GPU's memory"));
  out->print(fence_cost_table(*host_fence, "network path",
                              "to pinned host memory, where the host proxy reads"));
  out->check(
      {"4 B notified access, peer path, one way", "us", value_at(peer_access, 4), 1.5, true});
  out->check(
      {"4 B notified access, network path, one way (limit: host round trip + MPI 4 B one "
       "way + 2 us)",
       "us", network_4b, round_trip_us + mpi_4b + 2, true});
  out->write_json();
  return 0;
}
