// host_stream_bandwidth: pipelined bandwidth of notified access for each initiator, the
// performance model's bandwidth micro-benchmark. A batch of put_notify of one size goes back to
// back from one origin to one target, which waits for all of them and answers once; the figure is
// the batch's payload over the time from its first put to the answer (1 MB = 1e6 B), the median
// of 7 repetitions. The messages of a batch rotate over slots of a 128 MiB source area and a
// 128 MiB destination area (fewer slots where the batch has fewer messages), so that large
// messages are read from and written to the GPU's memory, not its L2 cache (50 MB on an H200),
// as the reference's copies are.
//
//   host    dcuda_put_notify_on_stream queued on one stream, dcuda_wait_notifications_on_stream
//           for the whole batch on the target's (common/stream_ping_pong.h's batch); CUDA events.
//   device  dcuda_put_notify by one rank of 1024 threads in the persistent kernel, the target
//           rank waiting with dcuda_wait_notifications (common/notified_passes.cuh, one pass).
//
// Paths: the same GPU, between two ranks of one process (every process runs its own pair at once,
// process 0's figures); and with `mpirun -np 2` and a GPU per process the peer path, from process
// 0's rank to process 1's. Sizes 8 B to 64 MiB; a batch is 1 GiB of payload or 10,000 messages,
// whichever is fewer, and at least 16 messages.
//
// Reference, same run: the copy engines moving the same batch, cudaMemcpyAsync of each message
// back to back over the same slots, within the GPU and into the other GPU (CUDA IPC). For each
// path the program prints the size from which the host's calls move more bytes per second than
// the rank's.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/device_payload.h"
#include "common/idle_kernel.cuh"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/notified_passes.cuh"
#include "common/stream_ping_pong.h"
#include "dcuda/device.cuh"
#include "dcuda/host_stream.h"
#include "common/ipc_buffer.h"
#include "common/statistics.h"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "host_stream_bandwidth";
constexpr int data_tag = 1;
constexpr int answer_tag = 2;
constexpr int device_threads = 1024;  // one rank's best, as local_bandwidth's one pair

enum class path : int { same_gpu, peer };

int batch_messages(std::size_t size) {
  return static_cast<int>(std::clamp<std::size_t>(GiB / size, 16, stream_batch_messages));
}

// Each side's area: source and destination each 2.5 times an H200's L2 cache.
constexpr std::size_t area_bytes = 128 * MiB;

// Message k of a batch reads source slot k % slots and writes destination slot k % slots.
int batch_slots(std::size_t size) {
  return static_cast<int>(std::clamp<std::size_t>(area_bytes / size, 1,
                                                  static_cast<std::size_t>(batch_messages(size))));
}

// MB/s of a batch of `size` bytes per message that took `us_per_message` per message.
double megabytes_per_second(std::size_t size, double us_per_message) {
  return static_cast<double>(size) / us_per_message;
}
figure megabytes_per_second(std::size_t size, const figure& us_per_message) {
  // The slowest repetition is the lowest bandwidth.
  return {megabytes_per_second(size, us_per_message.median),
          megabytes_per_second(size, us_per_message.max),
          megabytes_per_second(size, us_per_message.min)};
}

// The device-initiated batch: even world ranks send to the next rank (on the same GPU: the
// process's two ranks; peer: rank 0 of process 0 to rank 1 of process 1).
struct device_batch_run {
  int size;
  transfer_plan plan;
  unsigned char* windows;  // this process's ranks' windows, one per `window_stride`
  std::size_t window_stride;
  int first_rank;                                 // this process's first world rank
  unsigned long long repetition_ns[repetitions];  // written by rank 0
  int mismatches;
};

__global__ void __launch_bounds__(device_threads, 1)
    device_batch_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  device_batch_run* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  const bool sends = rank % 2 == 0;
  unsigned char* window =
      run->windows + static_cast<std::size_t>(rank - run->first_rank) * run->window_stride;
  run_notified_passes(gst, pass_role{sends, !sends, rank + 1, rank - 1, rank == 0}, run->plan,
                      run->size, window, rank, run->repetition_ns, &run->mismatches);
  dcuda_gpu_finish(gst);
}

// MB/s of the ranks' batches at every size, process 0's, on every process.
std::vector<figure> device_batch_mbps(const mpi_world& world, const options& command_line,
                                      path where, const std::vector<std::size_t>& sizes,
                                      bool& bytes_arrived) {
  const int ranks_here = where == path::same_gpu ? 2 : 1;
  std::vector<figure> rates;
  int mismatches = 0;
  {
    dcuda_session session(command_line, device_batch_kernel, device_threads,
                          {"--dcuda-ranks-per-device=" + std::to_string(ranks_here)});
    const std::size_t stride = 2 * area_bytes;  // [source slots][destination slots]
    const device_bytes windows(ranks_here * stride);
    for (const std::size_t size : sizes) {
      device_batch_run run{};
      run.size = static_cast<int>(size);
      run.plan.puts_per_pass = batch_messages(size);
      run.plan.slots = batch_slots(size);
      run.plan.passes = 1;
      run.plan.warmup_passes = 1;
      run.plan.pass_bytes = static_cast<std::size_t>(run.plan.puts_per_pass) * size;
      run.plan.window_bytes = 2 * static_cast<std::size_t>(run.plan.slots) * size;
      run.windows = windows.get<unsigned char>();
      run.window_stride = stride;
      run.first_rank = session.rank_info().rank_start;
      BENCH_CUDA_CHECK(cudaMemset(windows.get(), 0, windows.size()));
      BENCH_CUDA_CHECK(cudaDeviceSynchronize());
      session.run(run);
      mismatches += run.mismatches;
      std::vector<double> mbps;
      for (const unsigned long long ns : run.repetition_ns) {
        mbps.push_back(static_cast<double>(run.plan.pass_bytes) * 1e3 / static_cast<double>(ns));
      }
      rates.push_back(summary(mbps));
    }
  }
  for (figure& f : rates) f = world.from_process0(f);  // no MPI while the context lived
  bytes_arrived = bytes_arrived && !world.any(mismatches != 0);
  return rates;
}

// MB/s of the host's batches at every size, process 0's, on every process.
std::vector<figure> host_batch_mbps(const mpi_world& world, const options& command_line, path where,
                                    const std::vector<std::size_t>& sizes, bool& bytes_arrived) {
  const bool same_gpu = where == path::same_gpu;
  std::vector<figure> rates;
  dcuda_session session(command_line, idle_kernel, 32,
                        {same_gpu ? "--dcuda-ranks-per-device=2" : "--dcuda-ranks-per-device=1"});
  if (!same_gpu) require_distinct_gpus(world);
  const int first_rank = session.rank_info().rank_start;
  // Same GPU: from this process's first rank to its second; peer: from rank 0 to rank 1.
  const int origin = same_gpu ? first_rank : 0;
  const int target = origin + 1;
  const int sender = same_gpu ? world.process() : 0;  // whose payload pattern travels
  device_bytes window(area_bytes);
  device_bytes source(area_bytes);
  upload_payload(source.get(), source.size(), sender);
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(session.context(), window.get(), window.size(), &win);
  const owned_stream streams[2];  // same GPU: the origin's and the target's
  int message = 0;                // of the batch being queued
  int slots = 1;                  // of the size being measured
  const auto put_notify = [&](std::size_t size, cudaStream_t stream) {
    const std::size_t at = static_cast<std::size_t>(message++ % slots) * size;
    dcuda_put_notify_on_stream(session.context(), win, target, at, size,
                               source.get<unsigned char>() + at, data_tag, stream);
  };
  const auto wait = [&](int rank, int tag, int count, cudaStream_t stream) {
    dcuda_wait_notifications_on_stream(session.context(), rank, tag, count, stream);
  };
  const auto answer = [&](cudaStream_t stream) {
    dcuda_notify_on_stream(session.context(), win, origin, answer_tag, stream);
  };
  for (const std::size_t size : sizes) {
    const int messages = batch_messages(size);
    slots = batch_slots(size);
    BENCH_CUDA_CHECK(cudaMemset(window.get(), 0, window.size()));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    figure us_per_message{};
    if (same_gpu) {
      const cudaStream_t first = streams[0].get();
      const cudaStream_t second = streams[1].get();
      us_per_message = world.from_process0(two_stream_batch_us(
          first, second, [&] { put_notify(size, first); },
          [&](int count) { wait(target, data_tag, count, second); }, [&] { answer(second); },
          [&] { wait(origin, answer_tag, 1, first); }, messages));
    } else {
      const cudaStream_t stream = streams[0].get();
      us_per_message = stream_batch_us(
          world, stream, [&] { put_notify(size, stream); },
          [&](int count) { wait(target, data_tag, count, stream); }, [&] { answer(stream); },
          [&] { wait(origin, answer_tag, 1, stream); }, messages);
    }
    rates.push_back(megabytes_per_second(size, us_per_message));
    // Destination slot k holds source slot k: the whole run of slots holds the source's pattern.
    const bool receives = same_gpu || world.process() == 1;
    const std::size_t written = static_cast<std::size_t>(slots) * size;
    if (receives) {
      bytes_arrived = bytes_arrived && device_holds_payload(window.get(), written, sender);
    }
  }
  dcuda_host_win_free(session.context(), win);
  return rates;
}

// The copy engines' MB/s at every size, each batch's messages copied back to back over the same
// slots (cudaMemcpyAsync; peer: into the other process's GPU through CUDA IPC, process 0
// copying), process 0's figures on every process.
std::vector<figure> copy_engine_mbps(const mpi_world& world, path where,
                                     const std::vector<std::size_t>& sizes) {
  const bool peer = where == path::peer;
  std::optional<ipc_buffer_pair> peers;
  std::optional<device_bytes> local;
  if (peer) {
    peers.emplace(world, area_bytes);
  } else {
    local.emplace(area_bytes);
  }
  const device_bytes source(area_bytes);
  unsigned char* destination = peer ? peers->peers() : local->get<unsigned char>();
  const bool copies = !peer || world.process() == 0;
  const owned_stream stream;
  const owned_event start, stop;
  std::vector<figure> rates;
  for (const std::size_t size : sizes) {
    const int messages = batch_messages(size);
    const int slots = batch_slots(size);
    std::vector<double> mbps;
    for (int repetition = 0; copies && repetition <= repetitions; ++repetition) {  // 0: warm-up
      BENCH_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
      for (int k = 0; k < messages; ++k) {
        const std::size_t at = static_cast<std::size_t>(k % slots) * size;
        BENCH_CUDA_CHECK(cudaMemcpyAsync(destination + at, source.get<unsigned char>() + at, size,
                                         cudaMemcpyDefault, stream.get()));
      }
      BENCH_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
      BENCH_CUDA_CHECK(cudaEventSynchronize(stop.get()));
      float milliseconds = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start.get(), stop.get()));
      if (repetition > 0) {
        mbps.push_back(static_cast<double>(size) * messages / (milliseconds * 1e3));
      }
    }
    rates.push_back(world.from_process0(copies ? summary(mbps) : figure{}));
  }
  return rates;
}

// Prints one path's two tables and the size from which the host's batches are faster.
void report_path(report& out, path where, const std::vector<std::size_t>& sizes,
                 const std::vector<figure>& host, const std::vector<figure>& device,
                 const std::vector<figure>& copy_engines) {
  const bool same_gpu = where == path::same_gpu;
  // The path right after the call: dcuda-model finds the host's table by that beginning.
  const std::string what = same_gpu ? "same GPU (2 ranks of one process)"
                                    : "peer path (from process 0's rank to process 1's)";
  const std::string batch =
      "a batch of min(1 GiB, 10,000 messages), at least 16, back to back over 128 MiB of slots, "
      "one answer";
  const std::string copies =
      std::string(same_gpu ? "cudaMemcpyAsync device to device"
                           : "cudaMemcpyAsync into the other GPU (CUDA IPC)") +
      " of the same batch back to back over the same slots";
  table host_table{
      "pipelined bandwidth of host-initiated dcuda_put_notify_on_stream, " + what + ": " + batch,
      "MB/s",
      "copy engines",
      copies + ", same run",
      2,
      32,
      0,
      {}};
  table device_table{"pipelined bandwidth of device-initiated dcuda_put_notify, " + what +
                         ", one rank of " + std::to_string(device_threads) +
                         " threads each: " + batch,
                     "MB/s",
                     "copy engines",
                     copies + ", same run",
                     2,
                     device_threads,
                     0,
                     {}};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    host_table.rows.push_back(
        {sizes[i], host[i].median, copy_engines[i].median, host[i].min, host[i].max});
    device_table.rows.push_back(
        {sizes[i], device[i].median, copy_engines[i].median, device[i].min, device[i].max});
  }
  out.print(host_table);
  out.print(device_table);
  std::size_t host_from = 0;
  for (std::size_t i = sizes.size(); i-- > 0 && host[i].median > device[i].median;) {
    host_from = sizes[i];
  }
  const char* name = same_gpu ? "same GPU" : "peer path";
  if (host_from == 0) {
    std::printf("# %s: device-initiated batches were as fast or faster at every size\n\n", name);
  } else {
    std::printf("# %s: host-initiated batches moved more bytes per second from %zu bytes on\n\n",
                name, host_from);
  }
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  const options command_line = parse_options(
      argc, argv, benchmark,
      "pipelined bandwidth of notified access, host-initiated (dcuda_put_notify_on_stream) and "
      "device-initiated (dcuda_put_notify); the same GPU with any process count, and the peer "
      "path with mpirun -np 2 and a GPU per process");
  if (skip_for(world, gpu_shortage(world, 1))) return 0;
  std::vector<path> paths{path::same_gpu};
  if (world.processes() == 2 && world.one_node() && gpu_shortage(world, 2).empty()) {
    paths.push_back(path::peer);
  } else if (world.prints()) {
    std::printf(
        "# the peer path needs mpirun -np 2 on one node with a GPU per process; "
        "this run measures the same GPU alone\n\n");
  }
  std::optional<report> out;
  if (world.prints()) out.emplace(benchmark, command_line, current_device());
  const std::vector<std::size_t> sizes = message_sizes(8, largest_model_message);
  if (sizes.empty() && skip_for(world, "DCUDA_BENCH_MAX_SIZE leaves no size of 8 B or more")) {
    return 0;
  }

  bool bytes_arrived = true;
  for (const path where : paths) {
    const std::vector<figure> host =
        host_batch_mbps(world, command_line, where, sizes, bytes_arrived);
    const std::vector<figure> device =
        device_batch_mbps(world, command_line, where, sizes, bytes_arrived);
    const std::vector<figure> copy_engines = copy_engine_mbps(world, where, sizes);
    if (world.any(!bytes_arrived)) fail_job(benchmark, "a batch's bytes did not arrive intact");
    if (out) report_path(*out, where, sizes, host, device, copy_engines);
  }
  if (out) out->write_json();
  return 0;
}
