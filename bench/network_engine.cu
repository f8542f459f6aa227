// network_engine: thesis table 5.3 (what the network costs the host proxies): MPI between the 2
// processes of `mpirun -np 2 network_engine`, one per GPU, with the payload in device memory
// staged through pinned host memory, as dcuda's MPI engine moves it when MPI is not CUDA-aware
// (docs/performance.md), against the same messages from host buffers. A pure reference program:
// no dcuda kernel runs. Each process uses the GPU dcuda would give it: its index among the
// processes of its node.
//
//   latency    ping-pong, one way = round trip / 2. Device-staged: cudaMemcpy device -> pinned
//              host, MPI_Send; MPI_Recv into pinned host, cudaMemcpy -> device. Host: MPI_Send /
//              MPI_Recv of (pageable) host buffers.
//   bandwidth  process 0 -> process 1, osu_bw style windows of messages from distinct buffers.
//              Device-staged: each message copied to pinned memory (cudaMemcpyAsync, an event
//              per message) and sent as soon as its copy is done; the receiver copies each
//              message to the device as soon as it has arrived; the window ends when the last
//              copy to the device is done. Host: MPI_Isend / MPI_Irecv of host buffers.
//
// Sizes 1 B .. 4 MiB; the median of 7 repetitions, timed by process 0 with MPI_Wtime; receivers
// check the bytes they received. The first column is the device-staged figure, the reference the
// host-buffer one; the ratio is what staging costs.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/statistics.h"
#include "reference/mpi_ping_pong.h"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "network_engine";

// Device buffers and their pinned staging buffers, large enough for the largest window of the
// bandwidth test (64 MiB, mpi_stream_plan_for).
class staged_transfers {
 public:
  static constexpr std::size_t capacity = 64 * MiB;
  static constexpr int max_window = 64;

  explicit staged_transfers(const mpi_world& world)
      : world_(world),
        device_send_(capacity),
        device_receive_(capacity),
        host_send_(capacity),
        host_receive_(capacity) {
    BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    for (cudaEvent_t& event : copied_) {
      BENCH_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    }
  }
  ~staged_transfers() {
    for (cudaEvent_t event : copied_) cudaEventDestroy(event);
    cudaStreamDestroy(stream_);
  }
  staged_transfers(const staged_transfers&) = delete;
  staged_transfers& operator=(const staged_transfers&) = delete;

  // Ping-pong latency of `size` bytes between device buffers of the two processes.
  mpi_result latency(std::size_t size) {
    const int other = 1 - world_.process();
    prepare(size, 1, world_.process());
    const int count = static_cast<int>(size);
    const auto send = [&] {
      BENCH_CUDA_CHECK(
          cudaMemcpy(host_send_.get(), device_send_.get(), size, cudaMemcpyDeviceToHost));
      world_.check(MPI_Send(host_send_.get(), count, MPI_BYTE, other, 1, world_.comm()),
                   "MPI_Send");
    };
    const auto receive = [&] {
      world_.check(MPI_Recv(host_receive_.get(), count, MPI_BYTE, other, 1, world_.comm(),
                            MPI_STATUS_IGNORE),
                   "MPI_Recv");
      BENCH_CUDA_CHECK(
          cudaMemcpy(device_receive_.get(), host_receive_.get(), size, cudaMemcpyHostToDevice));
    };
    const int round_trips = mpi_round_trips_for(size);
    const double us =
        mpi_ping_pong_us(world_, mpi_warmup_for(round_trips), round_trips, send, receive);
    return {us, !world_.any(!received(size, 1, other))};
  }

  // Bandwidth of `size`-byte messages from process 0's device buffers to process 1's.
  mpi_result bandwidth(std::size_t size) {
    const mpi_stream_plan plan = mpi_stream_plan_for(size);
    prepare(size, plan.window, 0);
    std::vector<MPI_Request> requests(static_cast<std::size_t>(plan.window));
    const int count = static_cast<int>(size);
    const auto send_window = [&] {
      for (int i = 0; i < plan.window; ++i) {
        BENCH_CUDA_CHECK(cudaMemcpyAsync(host_send_.get() + i * size, device_send_.get() + i * size,
                                         size, cudaMemcpyDeviceToHost, stream_));
        BENCH_CUDA_CHECK(cudaEventRecord(copied_[i], stream_));
      }
      for (int i = 0; i < plan.window; ++i) {
        BENCH_CUDA_CHECK(cudaEventSynchronize(copied_[i]));
        world_.check(MPI_Isend(host_send_.get() + i * size, count, MPI_BYTE, 1, 1, world_.comm(),
                               &requests[static_cast<std::size_t>(i)]),
                     "MPI_Isend");
      }
      world_.check(MPI_Waitall(plan.window, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    };
    const auto receive_window = [&] {
      for (int i = 0; i < plan.window; ++i) {
        world_.check(MPI_Irecv(host_receive_.get() + i * size, count, MPI_BYTE, 0, 1, world_.comm(),
                               &requests[static_cast<std::size_t>(i)]),
                     "MPI_Irecv");
      }
      for (int i = 0; i < plan.window; ++i) {
        world_.check(MPI_Wait(&requests[static_cast<std::size_t>(i)], MPI_STATUS_IGNORE),
                     "MPI_Wait");
        BENCH_CUDA_CHECK(cudaMemcpyAsync(device_receive_.get() + i * size,
                                         host_receive_.get() + i * size, size,
                                         cudaMemcpyHostToDevice, stream_));
      }
      BENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    };
    const double rate =
        mpi_stream_gigabytes_per_second(world_, size, plan, send_window, receive_window);
    const bool wrong = world_.process() == 1 && !received(size, plan.window, 0);
    return {rate, !world_.any(wrong)};
  }

 private:
  // `messages` device send slots of `size` bytes hold the sender's pattern; receive slots are 0.
  void prepare(std::size_t size, int messages, int sender) {
    std::vector<unsigned char> pattern(size * static_cast<std::size_t>(messages));
    for (int i = 0; i < messages; ++i) fill_host_payload(pattern.data() + i * size, size, sender);
    BENCH_CUDA_CHECK(
        cudaMemcpy(device_send_.get(), pattern.data(), pattern.size(), cudaMemcpyHostToDevice));
    BENCH_CUDA_CHECK(cudaMemset(device_receive_.get(), 0, pattern.size()));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // Whether `messages` device receive slots of `size` bytes hold the sender's pattern.
  bool received(std::size_t size, int messages, int sender) const {
    std::vector<unsigned char> bytes(size * static_cast<std::size_t>(messages));
    BENCH_CUDA_CHECK(
        cudaMemcpy(bytes.data(), device_receive_.get(), bytes.size(), cudaMemcpyDeviceToHost));
    for (int i = 0; i < messages; ++i) {
      if (!host_holds_payload(bytes.data() + i * size, size, sender)) return false;
    }
    return true;
  }

  const mpi_world& world_;
  device_bytes device_send_;
  device_bytes device_receive_;
  pinned_bytes host_send_;
  pinned_bytes host_receive_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t copied_[max_window] = {};
};

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  const options command_line = parse_options(
      argc, argv, benchmark,
      "MPI between 2 processes with device buffers staged through pinned host memory, against "
      "host buffers (thesis table 5.3); run it as mpirun -np 2");
  if (skip_without_two_gpus(world, /*one_node=*/false)) return 0;

  BENCH_CUDA_CHECK(cudaSetDevice(world.local_index()));
  require_distinct_gpus(world);
  std::optional<report> out;
  if (world.prints()) {
    out.emplace(benchmark, command_line, current_device());
    out->set_measured_name("device-staged");
  }
  const std::vector<std::size_t> sizes = message_sizes();
  staged_transfers staged(world);
  const auto checked = [&](const mpi_result& result, const char* what, std::size_t size) {
    if (!result.data_arrived) {
      fail_job(benchmark,
               std::string(what) + ": wrong data received (" + std::to_string(size) + " B)");
    }
    return result.value;
  };

  table latency{
      "MPI ping-pong between 2 processes, one way: device buffers staged through pinned "
      "host memory (cudaMemcpy D2H + MPI_Send, MPI_Recv + cudaMemcpy H2D) against host "
      "buffers",
      "us",
      "MPI host",
      "MPI_Send/MPI_Recv ping-pong of host buffers of the same size",
      0,
      0,
      0,
      {}};
  for (const std::size_t size : sizes) {
    const double device_staged = checked(staged.latency(size), "device-staged latency", size);
    const double host = checked(mpi_host_latency(world, size), "host latency", size);
    latency.rows.push_back({size, device_staged, host});
  }
  if (out) out->print(latency);

  table bandwidth{
      "MPI bandwidth, process 0 -> process 1: device buffers staged through pinned "
      "host memory (cudaMemcpyAsync per message, sent or copied on as soon as ready) "
      "against host buffers",
      "GB/s",
      "MPI host",
      "MPI_Isend/MPI_Irecv windows of host-buffer messages of the same size (osu_bw "
      "style)",
      0,
      0,
      0,
      {}};
  for (const std::size_t size : sizes) {
    const double device_staged = checked(staged.bandwidth(size), "device-staged bandwidth", size);
    const double host = checked(mpi_host_bandwidth(world, size), "host bandwidth", size);
    bandwidth.rows.push_back({size, device_staged, host});
  }
  if (out) {
    out->print(bandwidth);
    out->write_json();
  }
  return 0;
}
