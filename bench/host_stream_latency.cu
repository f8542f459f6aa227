// host_stream_latency: host-initiated, stream-ordered notified access between the GPUs of 2
// processes of one node (dcuda/host_stream.h): `mpirun -np 2 host_stream_latency`; with
// `mpirun -np 1`, the same-GPU tables below alone.
//
// Each process queues a ping-pong on a stream of its own (common/stream_ping_pong.h): process 0
// sends `size` bytes (4 B .. 64 MiB) with dcuda_put_notify_on_stream into process 1's host window
// and waits with dcuda_wait_notifications_on_stream; process 1 mirrors it. The host queues the
// 100 round trips of a repetition faster than the GPUs play them, so the figure is the GPUs' and
// the operations' time, not the host's speed of issuing (a repetition where the host fell behind
// shows in the row's range). One way = round trip / 2, the median of 7 repetitions, from CUDA
// events on process 0's stream. Both check the bytes they received.
//
// The message rate (of the default context): process 0 queues 10,000 put_notify of 8 B, 1 KiB or
// 64 KiB back to back, process 1 waits for all of them and answers; time per message against an
// empty kernel launched as often (the floor of one kernel per message).
//
// Within one GPU (the same-GPU path, what the performance model's host fit there needs): each
// process plays the same ping-pong and message rate between its own two ranks on two streams,
// against the two-stream ping-pong of a copy within the GPU and a stream memory operation; and
// beside it the ping-pong of two ranks of the persistent kernel. For each path the program prints
// the size from which the host's calls are faster than the ranks'.
//
// Reference, same program run: reference/stream_memop_ping_pong.h, the same ping-pong built from
// a copy and a stream memory operation that writes a flag (one writer per flag: no counting).
// If $DCUDA_NVSHMEM_RESULT names the JSON file of nvshmem_latency (run before, in the same device
// session), its on-stream figures (nvshmemx_putmem_signal_on_stream) are printed beside dcuda's
// as one more table, with the target: 4 B at most NVSHMEM's; and its message rate beside dcuda's.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/anchor_figures.h"
#include "common/bench_report.h"
#include "common/initiator_crossover.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/device_payload.h"
#include "common/idle_kernel.cuh"
#include "common/message_sizes.h"
#include "common/notified_ping_pong.cuh"
#include "common/ranks_ping_pong.cuh"
#include "common/mpi_world.h"
#include "common/stream_ping_pong.h"
#include "dcuda/device.cuh"
#include "dcuda/host_stream.h"
#include "reference/launch_floor.cuh"
#include "reference/stream_memop_ping_pong.h"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "host_stream_latency";
constexpr std::size_t largest = largest_model_message;
constexpr int tag = 1;
constexpr int batch_tag = 2;
constexpr int answer_tag = 3;
// The message sizes of the message-rate test.
const std::vector<std::size_t> batch_sizes{8, 1024, 65536};

// The same ping-pong initiated by the ranks (dcuda_put_notify, dcuda_wait_notifications in the
// persistent kernel), one way at every size, in a context of its own; `same_gpu`: between the two
// ranks of each process instead (2 per GPU).
std::vector<figure> device_ping_pong_us(const mpi_world& world, const options& command_line,
                                        const std::vector<std::size_t>& sizes, bool& bytes_arrived,
                                        bool same_gpu = false) {
  return ranks_ping_pong_us(
      world, command_line, same_gpu ? same_gpu_ping_pong_kernel : two_process_ping_pong_kernel,
      ranks_ping_pong_threads,
      {same_gpu ? "--dcuda-ranks-per-device=2" : "--dcuda-ranks-per-device=1"},
      (same_gpu ? 4 : 2) * largest, sizes, bytes_arrived);
}

// The one-way time of the put_notify / wait ping-pong at every size, in a dcuda context of its
// own with `setting` (where a put_notify switches to the copy engines; empty: the default);
// `bytes_arrived` turns false where a payload did not arrive intact.
std::vector<figure> dcuda_ping_pong_us(const mpi_world& world, const options& command_line,
                                       const std::vector<std::size_t>& sizes,
                                       const std::string& setting, bool& bytes_arrived,
                                       std::vector<figure>* batch_per_message = nullptr) {
  std::vector<std::string> settings{"--dcuda-ranks-per-device=1"};
  if (!setting.empty()) settings.push_back(setting);
  dcuda_session session(command_line, idle_kernel, 32, settings);
  require_distinct_gpus(world);
  const int me = session.rank_info().rank_start;
  const int other = 1 - me;  // one rank per process: world rank = process index
  device_bytes window(largest);
  device_bytes source(largest);
  upload_payload(source.get(), largest, world.process());
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(session.context(), window.get(), largest, &win);
  cudaStream_t stream = nullptr;
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<figure> one_way_us;
  for (const std::size_t size : sizes) {
    BENCH_CUDA_CHECK(cudaMemset(window.get(), 0, size));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
    one_way_us.push_back(stream_ping_pong_us(
        world, stream,
        [&](int) {
          dcuda_put_notify_on_stream(session.context(), win, other, 0, size, source.get(), tag,
                                     stream);
        },
        [&](int) { dcuda_wait_notifications_on_stream(session.context(), me, tag, 1, stream); }));
    bytes_arrived = bytes_arrived && device_holds_payload(window.get(), size, other);
  }
  for (const std::size_t size : batch_sizes) {
    if (batch_per_message == nullptr) break;
    BENCH_CUDA_CHECK(cudaMemset(window.get(), 0, size));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    batch_per_message->push_back(stream_batch_us(
        world, stream,
        [&] {
          dcuda_put_notify_on_stream(session.context(), win, other, 0, size, source.get(),
                                     batch_tag, stream);
        },
        [&](int count) {
          dcuda_wait_notifications_on_stream(session.context(), me, batch_tag, count, stream);
        },
        [&] { dcuda_notify_on_stream(session.context(), win, other, answer_tag, stream); },
        [&] { dcuda_wait_notifications_on_stream(session.context(), me, answer_tag, 1, stream); }));
    if (world.process() == 1) {
      bytes_arrived = bytes_arrived && device_holds_payload(window.get(), size, other);
    }
  }
  cudaStreamDestroy(stream);
  dcuda_host_win_free(session.context(), win);
  return one_way_us;
}

// The same ping-pong within one GPU: each process between its own two ranks, on two streams of its
// own (two_stream_ping_pong_us), with dcuda_put_notify_on_stream into the other rank's half of the
// process's host window; then the message rate between them. Every process runs its own at once;
// process 0's figures. `bytes_arrived` turns false where a payload did not arrive intact.
std::vector<figure> same_gpu_ping_pong_us(const mpi_world& world, const options& command_line,
                                          const std::vector<std::size_t>& sizes,
                                          bool& bytes_arrived,
                                          std::vector<figure>& batch_per_message) {
  std::vector<figure> one_way_us;
  {
    dcuda_session session(command_line, idle_kernel, 32, {"--dcuda-ranks-per-device=2"});
    const int first_rank = session.rank_info().rank_start;
    const int rank_of[2] = {first_rank, first_rank + 1};
    device_bytes window(2 * largest);  // the half of each rank of this process
    device_bytes source(largest);
    upload_payload(source.get(), largest, world.process());
    dcuda_win win = DCUDA_WIN_NONE;
    dcuda_host_win_create(session.context(), window.get(), window.size(), &win);
    const owned_stream streams[2];
    const auto half_of = [&](int side) { return window.get<unsigned char>() + side * largest; };
    const auto put_notify = [&](int from, std::size_t size, int with_tag) {
      dcuda_put_notify_on_stream(session.context(), win, rank_of[1 - from], (1 - from) * largest,
                                 size, source.get(), with_tag, streams[from].get());
    };
    const auto wait = [&](int side, int with_tag, int count) {
      dcuda_wait_notifications_on_stream(session.context(), rank_of[side], with_tag, count,
                                         streams[side].get());
    };
    for (const std::size_t size : sizes) {
      BENCH_CUDA_CHECK(cudaMemset(window.get(), 0, window.size()));
      BENCH_CUDA_CHECK(cudaDeviceSynchronize());
      one_way_us.push_back(two_stream_ping_pong_us(
          streams[0].get(), streams[1].get(), [&](int side, int) { put_notify(side, size, tag); },
          [&](int side, int) { wait(side, tag, 1); }));
      for (int side = 0; side < 2; ++side) {
        bytes_arrived = bytes_arrived && device_holds_payload(half_of(side), size, world.process());
      }
    }
    for (const std::size_t size : batch_sizes) {
      BENCH_CUDA_CHECK(cudaMemset(window.get(), 0, window.size()));
      BENCH_CUDA_CHECK(cudaDeviceSynchronize());
      batch_per_message.push_back(two_stream_batch_us(
          streams[0].get(), streams[1].get(), [&] { put_notify(0, size, batch_tag); },
          [&](int count) { wait(1, batch_tag, count); },
          [&] {
            dcuda_notify_on_stream(session.context(), win, rank_of[0], answer_tag,
                                   streams[1].get());
          },
          [&] { wait(0, answer_tag, 1); }));
      bytes_arrived = bytes_arrived && device_holds_payload(half_of(1), size, world.process());
    }
    dcuda_host_win_free(session.context(), win);
  }
  for (figure& f : one_way_us) f = world.from_process0(f);
  for (figure& f : batch_per_message) f = world.from_process0(f);
  return one_way_us;
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  const options command_line = parse_options(
      argc, argv, benchmark,
      "host-initiated notified access on a stream (dcuda_put_notify_on_stream + "
      "dcuda_wait_notifications_on_stream) between the GPUs of 2 processes (mpirun -np 2), or "
      "within one GPU alone (mpirun -np 1)");
  if (world.processes() == 1) {
    if (skip_for(world, gpu_shortage(world, 1))) return 0;
    std::printf("# one process: the same-GPU tables alone; the peer path needs mpirun -np 2\n\n");
  } else if (skip_without_two_gpus(world, /*one_node=*/true)) {
    return 0;
  }
  const bool peer = world.processes() == 2;
  std::optional<report> out;
  if (world.prints()) out.emplace(benchmark, command_line, current_device());
  const std::vector<std::size_t> sizes = message_sizes(4, largest);
  if (sizes.empty() && skip_for(world, "DCUDA_BENCH_MAX_SIZE leaves no size of 4 B or more")) {
    return 0;
  }

  // dcuda as configured by default, then with one kernel at every size and with the copy
  // engines at every size: where the second gets faster than the first is the switch-over that
  // DCUDA_STREAM_COPY_ENGINE_FROM sets.
  bool bytes_arrived = true;
  std::vector<figure> batch_per_message;
  std::vector<figure> by_default, kernel_only, copy_engines_only, device_initiated;
  std::vector<double> floor_us;
  if (peer) {
    by_default =
        dcuda_ping_pong_us(world, command_line, sizes, "", bytes_arrived, &batch_per_message);
    kernel_only = dcuda_ping_pong_us(world, command_line, sizes,
                                     "--dcuda-stream-copy-engine-from=1073741824", bytes_arrived);
    copy_engines_only = dcuda_ping_pong_us(world, command_line, sizes,
                                           "--dcuda-stream-copy-engine-from=0", bytes_arrived);
    device_bytes source(largest);
    upload_payload(source.get(), largest, world.process());
    cudaStream_t stream = nullptr;
    BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    stream_memop_ping_pong floor(world, largest);
    for (const std::size_t size : sizes) {
      world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
      floor_us.push_back(
          floor.run(stream, source.get<unsigned char>(), size, [&](const unsigned char* received) {
            bytes_arrived =
                bytes_arrived && device_holds_payload(received, size, 1 - world.process());
          }));
    }
    cudaStreamDestroy(stream);
    device_initiated = device_ping_pong_us(world, command_line, sizes, bytes_arrived);
  }
  const std::vector<figure> same_gpu_device_initiated =
      device_ping_pong_us(world, command_line, sizes, bytes_arrived, /*same_gpu=*/true);
  std::vector<figure> same_gpu_batch_per_message;
  const std::vector<figure> same_gpu =
      same_gpu_ping_pong_us(world, command_line, sizes, bytes_arrived, same_gpu_batch_per_message);
  std::vector<double> same_gpu_floor_us;
  {
    device_bytes source(largest);
    upload_payload(source.get(), largest, world.process());
    const owned_stream first, second;
    two_stream_memop_ping_pong floor(largest);
    for (const std::size_t size : sizes) {
      same_gpu_floor_us.push_back(floor.run(
          first.get(), second.get(), source.get<unsigned char>(), size,
          [&](const unsigned char* received) {
            bytes_arrived = bytes_arrived && device_holds_payload(received, size, world.process());
          }));
    }
    for (double& us : same_gpu_floor_us) us = world.from_process0(us);
  }
  const figure launch_floor = launch_floor_us();
  if (world.any(!bytes_arrived)) fail_job(benchmark, "a ping-pong's bytes did not arrive intact");

  table results{
      "host-initiated notified access on a stream (dcuda_put_notify_on_stream + "
      "dcuda_wait_notifications_on_stream), one way, peer path, 2 processes",
      "us",
      "stream memop",
      "the same on-stream ping-pong from cudaMemcpyAsync into the other GPU (CUDA IPC) "
      "and cuStreamWriteValue32 of a flag there, cuStreamWaitValue32 on the own flag",
      2,
      32,
      0,
      {}};
  table switch_over{
      "dcuda_put_notify_on_stream as one kernel at every size "
      "(DCUDA_STREAM_COPY_ENGINE_FROM=1073741824), one way, peer path, 2 processes",
      "us",
      "copy engines",
      "dcuda_put_notify_on_stream as a copy by the copy engines and a counting kernel at every "
      "size (DCUDA_STREAM_COPY_ENGINE_FROM=0), same ping-pong, same run",
      2,
      32,
      0,
      {}};
  for (std::size_t i = 0; peer && i < sizes.size(); ++i) {
    results.rows.push_back(
        {sizes[i], by_default[i].median, floor_us[i], by_default[i].min, by_default[i].max});
    switch_over.rows.push_back({sizes[i], kernel_only[i].median, copy_engines_only[i].median,
                                kernel_only[i].min, kernel_only[i].max});
  }
  table rate{
      "message rate of dcuda_put_notify_on_stream: " + std::to_string(stream_batch_messages) +
          " queued back to back on one stream, then one answer; time per message, peer "
          "path, 2 processes",
      "us",
      "empty kernel",
      "an empty one-thread kernel launched " + std::to_string(stream_batch_messages) +
          " times back to back on one stream (the floor of one kernel per message), "
          "same run",
      2,
      32,
      1,
      {}};
  for (std::size_t i = 0; peer && i < batch_sizes.size(); ++i) {
    rate.rows.push_back({batch_sizes[i], batch_per_message[i].median, launch_floor.median,
                         batch_per_message[i].min, batch_per_message[i].max});
  }
  table initiators{
      "host-initiated dcuda_put_notify_on_stream against device-initiated "
      "dcuda_put_notify (a rank of 512 threads per process, in the persistent kernel), "
      "one way, peer path, 2 processes",
      "us",
      "device-initiated",
      "the same ping-pong between one rank of each process, "
      "dcuda_put_notify + dcuda_wait_notifications, same run",
      2,
      32,
      0,
      {}};
  for (std::size_t i = 0; peer && i < sizes.size(); ++i) {
    initiators.rows.push_back({sizes[i], by_default[i].median, device_initiated[i].median,
                               by_default[i].min, by_default[i].max});
  }
  table same_gpu_results{
      "host-initiated notified access on a stream (dcuda_put_notify_on_stream + "
      "dcuda_wait_notifications_on_stream), one way, same GPU, 2 ranks of one process on 2 "
      "streams",
      "us",
      "stream memop",
      "the same ping-pong between 2 streams of one process from cudaMemcpyAsync within the GPU "
      "and cuStreamWriteValue32 of the other stream's flag, cuStreamWaitValue32 on the own flag",
      2,
      32,
      0,
      {}};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    same_gpu_results.rows.push_back(
        {sizes[i], same_gpu[i].median, same_gpu_floor_us[i], same_gpu[i].min, same_gpu[i].max});
  }
  table same_gpu_rate{
      "message rate of dcuda_put_notify_on_stream within one GPU: " +
          std::to_string(stream_batch_messages) +
          " queued back to back on one stream to the process's other rank, then one answer; "
          "time per message",
      "us",
      "empty kernel",
      rate.reference_detail,
      2,
      32,
      1,
      {}};
  for (std::size_t i = 0; i < batch_sizes.size(); ++i) {
    same_gpu_rate.rows.push_back({batch_sizes[i], same_gpu_batch_per_message[i].median,
                                  launch_floor.median, same_gpu_batch_per_message[i].min,
                                  same_gpu_batch_per_message[i].max});
  }
  table same_gpu_initiators{
      "host-initiated dcuda_put_notify_on_stream against device-initiated dcuda_put_notify (2 "
      "ranks of 512 threads in the persistent kernel), one way, same GPU",
      "us",
      "device-initiated",
      "the same ping-pong between two ranks of one process, dcuda_put_notify + "
      "dcuda_wait_notifications, same run",
      2,
      ranks_ping_pong_threads,
      0,
      {}};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    same_gpu_initiators.rows.push_back({sizes[i], same_gpu[i].median,
                                        same_gpu_device_initiated[i].median, same_gpu[i].min,
                                        same_gpu[i].max});
  }
  if (out) {
    if (peer) {
      out->print(results);
      out->print(switch_over);
      out->print(rate);
      out->print(initiators);
    }
    out->print(same_gpu_results);
    out->print(same_gpu_rate);
    out->print(same_gpu_initiators);
    // Per path, the sizes at which the host's calls were faster (the curves may cross twice).
    const auto print_crossover = [&](const char* path, const std::vector<figure>& host,
                                     const std::vector<figure>& device) {
      std::vector<double> host_us, device_us;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        host_us.push_back(host[i].median);
        device_us.push_back(device[i].median);
      }
      std::printf("# %s: %s\n\n", path, faster_initiator_sizes(sizes, host_us, device_us).c_str());
    };
    if (peer) print_crossover("peer path", by_default, device_initiated);
    print_crossover("same GPU", same_gpu, same_gpu_device_initiated);
    // The smallest size from which the copy engines are faster at this and every larger size
    // (measured on the peer path alone).
    std::size_t copy_engines_from = 0;
    for (std::size_t i = kernel_only.size();
         i-- > 0 && copy_engines_only[i].median < kernel_only[i].median;) {
      copy_engines_from = sizes[i];
    }
    if (peer && copy_engines_from == 0) {
      std::printf("# one kernel was as fast as the copy engines or faster at every size\n\n");
    } else if (peer) {
      std::printf("# the copy engines were faster from %zu bytes on\n\n", copy_engines_from);
    }
  }

  const char* nvshmem_file = std::getenv("DCUDA_NVSHMEM_RESULT");
  if (out && peer && nvshmem_file != nullptr && nvshmem_file[0] != '\0') {
    const std::map<std::size_t, double> nvshmem =
        anchor_figures(nvshmem_file, {"NVSHMEM on-stream ping-pong"});
    table against{results.title,
                  "us",
                  "NVSHMEM on-stream",
                  "nvshmemx_putmem_signal_on_stream + nvshmemx_signal_wait_until_on_stream, the "
                  "same queued ping-pong, from nvshmem_latency (" +
                      std::filesystem::path(nvshmem_file).filename().string() + ")",
                  2,
                  32,
                  0,
                  {}};
    for (const row& r : results.rows) {
      const auto found = nvshmem.find(r.size_bytes);
      if (found != nvshmem.end()) against.rows.push_back({r.size_bytes, r.dcuda, found->second});
    }
    if (against.rows.empty()) {
      std::printf("# %s holds no NVSHMEM on-stream figures; no NVSHMEM table\n\n", nvshmem_file);
    } else {
      out->print(against);
      const auto four = nvshmem.find(4);
      if (four != nvshmem.end()) {
        out->check(
            {"4 B host-initiated notified access on a stream, peer path, one way, against "
             "NVSHMEM on-stream (ratio)",
             "ratio", results.rows.front().dcuda / four->second, 1.0, true});
      }
    }
    const std::map<std::size_t, double> nvshmem_rate =
        anchor_figures(nvshmem_file, {"NVSHMEM", "message rate"});
    table rate_against{rate.title,
                       "us",
                       "NVSHMEM on-stream",
                       "nvshmemx_putmem_signal_on_stream queued back to back as many times, then "
                       "one answer, from nvshmem_latency (" +
                           std::filesystem::path(nvshmem_file).filename().string() + ")",
                       2,
                       32,
                       0,
                       {}};
    for (const row& r : rate.rows) {
      const auto found = nvshmem_rate.find(r.size_bytes);
      if (found != nvshmem_rate.end()) {
        rate_against.rows.push_back({r.size_bytes, r.dcuda, found->second});
      }
    }
    if (rate_against.rows.empty()) {
      std::printf("# %s holds no NVSHMEM message rate; no table against it\n\n", nvshmem_file);
    } else {
      out->print(rate_against);
    }
  }
  if (out) out->write_json();
  return 0;
}
