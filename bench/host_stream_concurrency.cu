// host_stream_concurrency: how fast one GPU plays host-initiated puts queued on many streams at
// once (dcuda_put_notify_on_stream), the rate and bandwidth the performance model needs where a
// program drives several streams (docs/model.md, "Where each parameter comes from"):
// `mpirun -np 2 host_stream_concurrency`, one GPU per process, one node.
//
// Each process queues, on N streams at once (N = 1, 4, 16, 64), the same number of put_notify of
// one size (8 B to 32 MiB) per stream, each stream from a source of its own into a target area of
// its own: into the other process's host window (peer path) or into its own (same GPU). A gate
// holds every stream until both processes have queued everything (common/host_gate.cuh), so the
// figure is the GPUs', not the host's speed of queueing. Time per message = the time from the
// gate until the last stream is through, over the messages of all streams: the aggregate time
// per message of the GPU (process 0's; both processes send at once, as SUMMA's GPUs do). The
// median of 7 repetitions after a warm-up. Every process then waits on a stream for every
// notification it was sent and checks the bytes of the last target area.
//
// Reference, same run: cudaMemcpyAsync of the same sizes from the same streams into the same
// areas (the other GPU's by CUDA IPC): what the copies alone cost, with no notification.
//
// Then the stream waits (dcuda_wait_notifications_on_stream) from N streams at once, each for one
// notification that has already arrived: what the GPU spends passing a wait, which a program
// that waits on many streams pays besides its puts. Reference: an empty one-thread kernel launched
// as often from the same streams.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/device_payload.h"
#include "common/host_gate.cuh"
#include "common/idle_kernel.cuh"
#include "common/ipc_buffer.h"
#include "common/mpi_world.h"
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "dcuda/host_stream.h"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "host_stream_concurrency";
const std::vector<int> stream_counts{1, 4, 16, 64};
const std::vector<std::size_t> sizes{8, 65536, std::size_t{1} << 20, std::size_t{8} << 20,
                                     std::size_t{32} << 20};
constexpr std::size_t largest_size = std::size_t{32} << 20;
constexpr int most_streams = 64;
constexpr int same_gpu_tag = 1;
constexpr int peer_tag = 2;
constexpr int arrived_tag = 3;
constexpr int waits_per_repetition = 256;

__global__ void empty_kernel() {}

// Messages of one repetition, over all streams: enough that the first put's latency hardly
// counts; few enough that the largest sizes take milliseconds, and that everything fits the
// launches CUDA keeps pending before a launch blocks the host (with 1,024 puts on one stream the
// host blocked behind the closed gate).
int messages_per_repetition(std::size_t size) {
  constexpr std::size_t bytes_budget = std::size_t{2} << 30;
  return static_cast<int>(std::clamp<std::size_t>(bytes_budget / size, 64, 256));
}

// The gate, the streams and their events of every measurement.
struct stream_set {
  host_gate gate;
  unsigned gates_queued = 0;
  owned_stream gate_stream;
  owned_event opened;
  std::vector<owned_stream> streams = std::vector<owned_stream>(most_streams);
  std::vector<owned_event> drained = std::vector<owned_event>(most_streams);
};

// Microseconds per message over `stream_count` streams, each with `per_stream` messages that
// `queue(stream_index, stream)` queues; process 0's median and range, on every process.
template <typename Queue>
figure per_message_us(const mpi_world& world, stream_set& set, int stream_count, int per_stream,
                      Queue&& queue) {
  std::vector<double> per_message;
  for (int repetition = 0; repetition <= repetitions; ++repetition) {  // the first: warm-up
    set.gate.queue(++set.gates_queued, set.gate_stream.get());
    BENCH_CUDA_CHECK(cudaEventRecord(set.opened.get(), set.gate_stream.get()));
    for (int s = 0; s < stream_count; ++s) {
      BENCH_CUDA_CHECK(cudaStreamWaitEvent(set.streams[s].get(), set.opened.get(), 0));
    }
    // Round robin over the streams, as a program that feeds several streams queues.
    for (int message = 0; message < per_stream; ++message) {
      for (int s = 0; s < stream_count; ++s) queue(s, set.streams[s].get());
    }
    for (int s = 0; s < stream_count; ++s) {
      BENCH_CUDA_CHECK(cudaEventRecord(set.drained[s].get(), set.streams[s].get()));
    }
    world.check(MPI_Barrier(world.comm()), "MPI_Barrier");  // both GPUs start together
    set.gate.open(set.gates_queued);
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    if (set.gate.gave_up()) fail_job(benchmark, "a gate waited 60 s for the host");
    float longest_ms = 0;
    for (int s = 0; s < stream_count; ++s) {
      float milliseconds = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, set.opened.get(), set.drained[s].get()));
      longest_ms = std::max(longest_ms, milliseconds);
    }
    if (repetition > 0) {
      per_message.push_back(static_cast<double>(longest_ms) * 1e3 / (stream_count * per_stream));
    }
  }
  return world.from_process0(summary(per_message));
}

struct measured {
  std::vector<figure> dcuda;  // by stream count, then size (waits: by stream count)
  std::vector<figure> reference;
};

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  const options command_line = parse_options(
      argc, argv, benchmark,
      "host-initiated puts (dcuda_put_notify_on_stream) queued on 1 to 64 streams at once, time "
      "per message, same GPU and peer path; mpirun -np 2");
  if (skip_without_two_gpus(world, /*one_node=*/true)) return 0;
  std::optional<report> out;
  if (world.prints()) out.emplace(benchmark, command_line, current_device());

  measured same_gpu, peer, waits;
  bool bytes_arrived = true;
  {
    dcuda_session session(command_line, idle_kernel, 32, {"--dcuda-ranks-per-device=1"});
    require_distinct_gpus(world);
    const int me = session.rank_info().rank_start;
    const int other = 1 - me;  // one rank per process: world rank = process index
    // Each stream's target area in both processes' windows, and its own source.
    const ipc_buffer_pair targets(world, most_streams * largest_size);
    const device_bytes sources(most_streams * largest_size);
    upload_payload(sources.get(), largest_size, world.process());
    for (int s = 1; s < most_streams; ++s) {
      BENCH_CUDA_CHECK(cudaMemcpy(sources.get() + s * largest_size, sources.get(), largest_size,
                                  cudaMemcpyDeviceToDevice));
    }
    dcuda_win win = DCUDA_WIN_NONE;
    dcuda_host_win_create(session.context(), targets.mine(), targets.size(), &win);
    stream_set set;
    for (const bool to_peer : {false, true}) {
      measured& into = to_peer ? peer : same_gpu;
      const int target_rank = to_peer ? other : me;
      const int tag = to_peer ? peer_tag : same_gpu_tag;
      unsigned char* const reference_target = to_peer ? targets.peers() : targets.mine();
      for (const int stream_count : stream_counts) {
        for (const std::size_t size : sizes) {
          const int per_stream = std::max(1, messages_per_repetition(size) / stream_count);
          const auto area = [&](int s) { return s * largest_size; };
          BENCH_CUDA_CHECK(cudaMemset(targets.mine(), 0, targets.size()));
          BENCH_CUDA_CHECK(cudaDeviceSynchronize());
          world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
          into.dcuda.push_back(
              per_message_us(world, set, stream_count, per_stream, [&](int s, cudaStream_t stream) {
                dcuda_put_notify_on_stream(session.context(), win, target_rank, area(s), size,
                                           sources.get() + area(s), tag, stream);
              }));
          // Every notification this rank was sent, counted on a stream: the watchdog names this
          // wait if one never arrives.
          const int sent = (repetitions + 1) * stream_count * per_stream;
          dcuda_wait_notifications_on_stream(session.context(), me, tag, sent,
                                             set.streams[0].get());
          BENCH_CUDA_CHECK(cudaStreamSynchronize(set.streams[0].get()));
          const int sender = to_peer ? other : me;
          bytes_arrived =
              bytes_arrived &&
              device_holds_payload(targets.mine() + area(stream_count - 1), size, sender);
          world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
          into.reference.push_back(
              per_message_us(world, set, stream_count, per_stream, [&](int s, cudaStream_t stream) {
                BENCH_CUDA_CHECK(cudaMemcpyAsync(reference_target + area(s),
                                                 sources.get() + area(s), size,
                                                 cudaMemcpyDeviceToDevice, stream));
              }));
        }
      }
    }
    for (const int stream_count : stream_counts) {
      const int per_stream = std::max(1, waits_per_repetition / stream_count);
      // Every notification the waits take, counted before they are queued.
      for (int n = 0; n < (repetitions + 1) * stream_count * per_stream; ++n) {
        dcuda_notify_on_stream(session.context(), win, me, arrived_tag, set.streams[0].get());
      }
      BENCH_CUDA_CHECK(cudaStreamSynchronize(set.streams[0].get()));
      waits.dcuda.push_back(
          per_message_us(world, set, stream_count, per_stream, [&](int, cudaStream_t stream) {
            dcuda_wait_notifications_on_stream(session.context(), me, arrived_tag, 1, stream);
          }));
      waits.reference.push_back(
          per_message_us(world, set, stream_count, per_stream, [&](int, cudaStream_t stream) {
            empty_kernel<<<1, 1, 0, stream>>>();
            BENCH_CUDA_CHECK(cudaGetLastError());
          }));
    }
    dcuda_host_win_free(session.context(), win);
  }
  if (world.any(!bytes_arrived)) fail_job(benchmark, "a put's bytes did not arrive intact");

  if (out) {
    for (const bool to_peer : {false, true}) {
      const measured& results = to_peer ? peer : same_gpu;
      for (std::size_t c = 0; c < stream_counts.size(); ++c) {
        const int n = stream_counts[c];
        table per_message{
            "host-initiated puts from " + std::to_string(n) + (n == 1 ? " stream" : " streams") +
                " at once (dcuda_put_notify_on_stream), time per message, " +
                (to_peer ? "peer path, 2 processes sending to each other"
                         : "same GPU, each process into its own window"),
            "us",
            "cudaMemcpyAsync",
            "cudaMemcpyAsync of the same sizes from the same streams into the same areas "
            "(the other GPU's by CUDA IPC), no notification, same run",
            2,
            32,
            0,
            {}};
        for (std::size_t i = 0; i < sizes.size(); ++i) {
          const figure& f = results.dcuda[c * sizes.size() + i];
          per_message.rows.push_back(
              {sizes[i], f.median, results.reference[c * sizes.size() + i].median, f.min, f.max});
        }
        out->print(per_message);
      }
    }
    table per_wait{
        "stream waits (dcuda_wait_notifications_on_stream) from N streams at once, "
        "each for one notification already arrived, time per wait",
        "us",
        "empty kernel",
        "an empty one-thread kernel launched as often from the same streams, same run",
        2,
        32,
        1,
        {},
        "streams"};
    for (std::size_t c = 0; c < stream_counts.size(); ++c) {
      per_wait.rows.push_back({static_cast<std::size_t>(stream_counts[c]), waits.dcuda[c].median,
                               waits.reference[c].median, waits.dcuda[c].min, waits.dcuda[c].max});
    }
    out->print(per_wait);
    out->write_json();
  }
  return 0;
}
