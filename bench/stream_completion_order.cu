// stream_completion_order: two streams, each a kernel followed by a transfer to a peer of its
// own, where the second stream's kernel ends first: `mpirun -np 2 stream_completion_order`.
//
// The experiment of Aji et al.'s stream-ordered MPI (docs/design.md, "Stream-ordered
// operations"). Process 0 queues kernel K0 on stream 0 and kernel K1 on stream 1 (one block each:
// they run side by side), and after each a put_notify of `message_bytes` to a rank of its own on
// process 1 (the two ranks of process 1, two endpoints). K1 is fixed; K0 grows from K1's length to
// K1 plus 3 times the transfer's time, passing the point of best overlap where K0 ends as K1's
// transfer does. Three versions of process 0's host code, each round timed on the host from the
// first launch to the end of both transfers (median of `rounds`, the versions taking turns):
//   issue order  synchronise with stream 0, send its message and wait for it, then the same for
//                stream 1 (what a program does that sends with blocking calls after each kernel);
//   hand-written polls both streams with cudaStreamQuery and sends each message as soon as its
//                kernel is done, then waits for both;
//   dcuda        queues each put_notify on its stream behind its kernel with
//                dcuda_put_notify_on_stream and waits for both streams: nothing else.
// The sends of all three are dcuda_put_notify_on_stream: the versions differ only in when the
// host lets each one start. Process 1 counts every notification with a stream wait and checks the
// last round's bytes, stamp of its kernel included.
// Targets: at the point of best overlap, dcuda at least 1.3x as fast as the issue order and
// within 5% of the hand-written version.
#include <algorithm>
#include <iterator>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/device_payload.h"
#include "common/idle_kernel.cuh"
#include "common/mpi_world.h"
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "dcuda/host_stream.h"
#include "reference/mpi_ping_pong.h"  // host_payload_byte and friends

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "stream_completion_order";
constexpr std::size_t message_bytes = std::size_t{32} << 20;
constexpr double k1_us = 100.0;
constexpr int rounds = 25;
constexpr int tag = 7;
constexpr int payload_of_stream[2] = {10, 11};  // host_payload_byte's sender for each message
// K0 = K1 + factor x the transfer's time.
constexpr double k0_factors[] = {0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0};

// A kernel of `ns` nanoseconds on one multiprocessor that then stamps its message with `round`:
// the bytes sent after it show that the send waited for it.
__global__ void timed_kernel(unsigned long long ns, std::uint32_t* stamp, std::uint32_t round) {
  unsigned long long began = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(began));
  for (;;) {
    unsigned long long now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - began >= ns) break;
  }
  if (threadIdx.x == 0) *stamp = round;
}

enum class version { issue_order, hand_written, dcuda_on_stream };

struct sender {
  dcuda_host_context_handle context;
  dcuda_win win;
  int peers[2];  // the rank of process 1 that each stream's message goes to
  device_bytes* sources[2];
  owned_stream streams[2];
  std::uint32_t round = 0;

  void send(int s) {
    dcuda_put_notify_on_stream(context, win, peers[s], s * message_bytes, message_bytes,
                               sources[s]->get(), tag, streams[s].get());
  }
  void launch(int s, double us) {
    timed_kernel<<<1, 32, 0, streams[s].get()>>>(static_cast<unsigned long long>(us * 1e3),
                                                 sources[s]->get<std::uint32_t>(), round);
    BENCH_CUDA_CHECK(cudaGetLastError());
  }

  // One round of `how`, in microseconds from the first launch to the end of both transfers.
  double play(version how, double k0_us) {
    ++round;
    const auto start = std::chrono::steady_clock::now();
    launch(0, k0_us);
    if (how == version::dcuda_on_stream) send(0);
    launch(1, k1_us);
    if (how == version::dcuda_on_stream) send(1);
    if (how == version::issue_order) {
      for (int s = 0; s < 2; ++s) {
        BENCH_CUDA_CHECK(cudaStreamSynchronize(streams[s].get()));
        send(s);
        BENCH_CUDA_CHECK(cudaStreamSynchronize(streams[s].get()));
      }
    } else if (how == version::hand_written) {
      bool sent[2] = {false, false};
      while (!sent[0] || !sent[1]) {
        for (int s = 0; s < 2; ++s) {
          if (sent[s]) continue;
          const cudaError_t state = cudaStreamQuery(streams[s].get());
          if (state == cudaErrorNotReady) continue;
          BENCH_CUDA_CHECK(state);
          send(s);
          sent[s] = true;
        }
      }
    }
    for (const owned_stream& stream : streams)
      BENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
        .count();
  }
};

// Whether process 1's window holds both messages of the last round (`round`).
bool holds_last_round(const unsigned char* window, std::uint32_t round) {
  std::vector<unsigned char> bytes(2 * message_bytes);
  BENCH_CUDA_CHECK(cudaMemcpy(bytes.data(), window, bytes.size(), cudaMemcpyDeviceToHost));
  for (int s = 0; s < 2; ++s) {
    const unsigned char* message = bytes.data() + s * message_bytes;
    std::uint32_t stamp = 0;
    std::copy(message, message + sizeof stamp, reinterpret_cast<unsigned char*>(&stamp));
    if (stamp != round) return false;
    for (std::size_t i = sizeof stamp; i < message_bytes; ++i) {
      if (message[i] != host_payload_byte(payload_of_stream[s], i)) return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  const options command_line = parse_options(
      argc, argv, benchmark,
      "two streams, each a kernel and a put_notify to a peer of its own: issue order, "
      "hand-written overlap and dcuda_put_notify_on_stream; mpirun -np 2");
  if (skip_without_two_gpus(world, /*one_node=*/true)) return 0;
  dcuda_session session(command_line, idle_kernel, 32, {"--dcuda-ranks-per-device=2"});
  require_distinct_gpus(world);
  const dcuda_rank_info& info = session.rank_info();
  device_bytes window(2 * message_bytes);
  BENCH_CUDA_CHECK(cudaMemset(window.get(), 0, 2 * message_bytes));
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(session.context(), window.get(), 2 * message_bytes, &win);

  std::vector<double> k0s;
  std::vector<double> times[3];  // [version] per K0
  long long alone_messages = 0;  // the transfer timed alone: to process 1's second rank
  std::uint32_t last_round = 0;
  double transfer_us = 0;
  if (world.process() == 0) {
    device_bytes first(message_bytes);
    device_bytes second(message_bytes);
    device_bytes* sources[2] = {&first, &second};
    for (int s = 0; s < 2; ++s)
      upload_payload(sources[s]->get(), message_bytes, payload_of_stream[s]);
    const int peer = info.rank_start + info.rank_responsible;  // process 1's first rank
    sender out{session.context(), win, {peer, peer + 1}, {&first, &second}, {}, 0};
    // The transfer alone (after a warm-up): what K0 must add to K1 to overlap it.
    std::vector<double> alone;
    for (int i = 0; i <= rounds; ++i) {
      const auto start = std::chrono::steady_clock::now();
      out.send(1);
      BENCH_CUDA_CHECK(cudaStreamSynchronize(out.streams[1].get()));
      if (i > 0) {
        alone.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count());
      }
    }
    transfer_us = median(alone);
    alone_messages = rounds + 1;
    for (const double factor : k0_factors) {
      const double k0 = k1_us + factor * transfer_us;
      k0s.push_back(k0);
      std::vector<double> per_version[3];
      for (int r = 0; r <= rounds; ++r) {  // the first: warm-up
        for (int v = 0; v < 3; ++v) {
          const double us = out.play(static_cast<version>(v), k0);
          if (r > 0) per_version[v].push_back(us);
        }
      }
      for (int v = 0; v < 3; ++v) times[v].push_back(median(per_version[v]));
    }
    last_round = out.round;
  }
  // Process 1 counts what process 0 sent: every round one message to each of its ranks, and the
  // transfer timed alone more to the second.
  long long counts[2] = {static_cast<long long>(last_round),
                         static_cast<long long>(last_round) + alone_messages};
  world.check(MPI_Bcast(counts, 2, MPI_LONG_LONG, 0, world.comm()), "MPI_Bcast");
  world.check(MPI_Bcast(&last_round, 1, MPI_UINT32_T, 0, world.comm()), "MPI_Bcast");
  bool arrived = true;
  if (world.process() == 1) {
    owned_stream stream;
    for (int s = 0; s < 2; ++s) {
      dcuda_wait_notifications_on_stream(session.context(), info.rank_start + s, tag,
                                         static_cast<int>(counts[s]), stream.get());
    }
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    arrived = holds_last_round(window.get<unsigned char>(), last_round);
  }
  if (world.any(!arrived)) fail_job(benchmark, "the last round's messages did not arrive intact");
  dcuda_host_win_free(session.context(), win);
  if (!world.prints()) return 0;

  report out(benchmark, command_line, current_device());
  char what[256];
  std::snprintf(what, sizeof what,
                "2 streams on process 0's GPU, K1 = %.0f us, then a %zu MiB put_notify each to a "
                "rank of its own on process 1 (alone %.1f us); time of a round",
                k1_us, message_bytes >> 20, transfer_us);
  table against_issue_order{
      std::string("dcuda_put_notify_on_stream behind each kernel: ") + what,
      "us",
      "issue order",
      "cudaStreamSynchronize(stream 0), its put_notify and wait, then the same for stream 1; "
      "same run",
      2,
      32,
      1,
      {},
      "K0 (us)"};
  table against_hand_written = against_issue_order;
  against_hand_written.reference_name = "hand-written";
  against_hand_written.reference_detail =
      "cudaStreamQuery on both streams, each put_notify issued as soon as its kernel is done; "
      "same run";
  // The point of best overlap, fixed before measuring: K0 = K1 + the transfer (factor 1).
  const std::size_t best = static_cast<std::size_t>(
      std::find(std::begin(k0_factors), std::end(k0_factors), 1.0) - std::begin(k0_factors));
  std::size_t largest = 0;  // where the speed-up over the issue order measured largest
  for (std::size_t i = 0; i < k0s.size(); ++i) {
    const auto k0 = static_cast<std::size_t>(k0s[i]);
    against_issue_order.rows.push_back({k0, times[2][i], times[0][i]});
    against_hand_written.rows.push_back({k0, times[2][i], times[1][i]});
    if (times[0][i] / times[2][i] > times[0][largest] / times[2][largest]) largest = i;
  }
  out.print(against_issue_order);
  out.print(against_hand_written);
  std::printf("# the largest speed-up over the issue order: %.3f at K0 = %.0f us\n",
              times[0][largest] / times[2][largest], k0s[largest]);
  out.check(
      {"speed-up of dcuda on-stream over the issue order at the point of best overlap "
       "(K0 = " +
           std::to_string(static_cast<int>(k0s[best])) + " us)",
       "ratio", times[0][best] / times[2][best], 1.3, false});
  out.check({"dcuda on-stream against the hand-written overlap at that point (time ratio)", "ratio",
             times[2][best] / times[1][best], 1.05, true});
  out.write_json();
  return 0;
}
