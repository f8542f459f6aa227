// host_stream_network: host-initiated, stream-ordered notified access through the network path,
// forced between the 2 processes of one node (--dcuda-force-network=1; the processes may share a
// GPU, which this path does not use to reach the other): `mpirun -np 2 host_stream_network`.
//
// Each process queues a ping-pong on a stream of its own (common/stream_ping_pong.h): process 0
// sends `size` bytes (4 B .. 4 MiB) with dcuda_put_notify_on_stream into process 1's host window
// and waits with dcuda_wait_notifications_on_stream; process 1 mirrors it. Each message goes
// through both processes' network threads (runtime/stream_network.h). One way = round trip / 2,
// the median of 7 repetitions of 100 round trips, from CUDA events on process 0's stream; both
// check the bytes they received.
//
// References, same run: MPI's ping-pong between host buffers of the same 2 processes (what the
// threads' messages cost at least), and the ping-pong of two ranks of the persistent kernel
// through the network path (device-initiated: the host proxies carry it); the program prints the
// size from which the host's calls are faster than the ranks' (only where each process has a GPU
// of its own: two persistent kernels on one GPU run in turns).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/initiator_crossover.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/device_payload.h"
#include "common/idle_kernel.cuh"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/notified_ping_pong.cuh"
#include "common/ranks_ping_pong.cuh"
#include "common/stream_ping_pong.h"
#include "dcuda/device.cuh"
#include "dcuda/host_stream.h"
#include "reference/mpi_ping_pong.h"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "host_stream_network";
constexpr int tag = 1;
constexpr const char* force_network = "--dcuda-force-network=1";

// The host-initiated ping-pong through the network at every size; `bytes_arrived` turns false
// where a payload did not arrive intact.
std::vector<figure> host_ping_pong_us(const mpi_world& world, const options& command_line,
                                      const std::vector<std::size_t>& sizes, bool& bytes_arrived) {
  dcuda_session session(command_line, idle_kernel, 32,
                        {"--dcuda-ranks-per-device=1", force_network});
  const int me = session.rank_info().rank_start;
  const int other = 1 - me;  // one rank per process: world rank = process index
  device_bytes window(largest_message);
  device_bytes source(largest_message);
  upload_payload(source.get(), largest_message, world.process());
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(session.context(), window.get(), largest_message, &win);
  const owned_stream stream;
  std::vector<figure> one_way_us;
  for (const std::size_t size : sizes) {
    BENCH_CUDA_CHECK(cudaMemset(window.get(), 0, size));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
    one_way_us.push_back(stream_ping_pong_us(
        world, stream.get(),
        [&](int) {
          dcuda_put_notify_on_stream(session.context(), win, other, 0, size, source.get(), tag,
                                     stream.get());
        },
        [&](int) {
          dcuda_wait_notifications_on_stream(session.context(), me, tag, 1, stream.get());
        }));
    bytes_arrived = bytes_arrived && device_holds_payload(window.get(), size, other);
  }
  dcuda_host_win_free(session.context(), win);
  return one_way_us;
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark, MPI_THREAD_MULTIPLE);
  const options command_line = parse_options(
      argc, argv, benchmark,
      "host-initiated notified access on a stream through the network path (forced) between 2 "
      "processes of one node; mpirun -np 2");
  if (world.processes() != 2) fail_job(benchmark, "runs as 2 processes (mpirun -np 2)");
  if (skip_without_gpu(benchmark)) return 0;
  std::optional<report> out;
  if (world.prints()) out.emplace(benchmark, command_line, current_device());
  const std::vector<std::size_t> sizes = message_sizes(4);

  bool bytes_arrived = true;
  const std::vector<figure> host = host_ping_pong_us(world, command_line, sizes, bytes_arrived);
  // Two persistent kernels on one GPU take turns in time slices of the GPU, which the ranks'
  // ping-pong would measure instead of the path: only where each process has a GPU of its own.
  const bool own_gpus = gpus_distinct(world);
  const std::vector<figure> device =
      own_gpus ? ranks_ping_pong_us(world, command_line, two_process_ping_pong_kernel,
                                    ranks_ping_pong_threads,
                                    {"--dcuda-ranks-per-device=1", force_network},
                                    2 * largest_message, sizes, bytes_arrived)
               : std::vector<figure>(sizes.size());
  std::vector<double> mpi_us;
  for (const std::size_t size : sizes) {
    const mpi_result mpi = mpi_host_latency(world, size);
    bytes_arrived = bytes_arrived && mpi.data_arrived;
    mpi_us.push_back(mpi.value);
  }
  if (world.any(!bytes_arrived)) fail_job(benchmark, "a ping-pong's bytes did not arrive intact");

  table against_mpi{
      "host-initiated notified access on a stream (dcuda_put_notify_on_stream + "
      "dcuda_wait_notifications_on_stream), one way, network path (forced), 2 processes",
      "us",
      "MPI host",
      "MPI_Send/MPI_Recv ping-pong between host buffers of the same 2 processes, one way",
      2,
      32,
      0,
      {}};
  table initiators{
      "host-initiated dcuda_put_notify_on_stream against device-initiated dcuda_put_notify (a "
      "rank of 512 threads per process), one way, network path (forced)",
      "us",
      "device-initiated",
      "the same ping-pong between the first ranks of the 2 processes' persistent kernels, "
      "dcuda_put_notify + dcuda_wait_notifications, same run",
      2,
      ranks_ping_pong_threads,
      0,
      {}};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    against_mpi.rows.push_back({sizes[i], host[i].median, mpi_us[i], host[i].min, host[i].max});
    initiators.rows.push_back(
        {sizes[i], host[i].median, device[i].median, host[i].min, host[i].max});
  }
  if (out) {
    out->print(against_mpi);
    if (!own_gpus) {
      std::printf(
          "# the 2 processes share a GPU: the device-initiated reference needs a GPU per "
          "process (two persistent kernels on one GPU run in turns)\n\n");
      out->write_json();
      return 0;
    }
    out->print(initiators);
    std::vector<double> host_us, device_us;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      host_us.push_back(host[i].median);
      device_us.push_back(device[i].median);
    }
    std::printf("# network path: %s\n\n",
                faster_initiator_sizes(sizes, host_us, device_us).c_str());
    out->write_json();
  }
  return 0;
}
