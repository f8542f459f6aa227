// host_roundtrip: thesis table 5.2, the device -> host -> device round trip that the host proxy
// adds to every operation it carries. Rank 0 calls dcuda_ping_host (extension): a message on
// the command channel, answered by the host proxy through mapped host memory. Rank 0 times each
// repetition of pings with the GPU's global timer; the figure is the median round trip.
//
// One rank: the channel alone, no other rank polling the GPU's memory.
//
// Reference, same run: mapped_flag_round_trip.cuh, a counter ping-ponged between a one-block
// kernel and a spinning host thread through two words of mapped pinned host memory.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/dcuda_session.h"
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "dcuda/detail/device/clock.cuh"
#include "reference/mapped_flag_round_trip.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "host_roundtrip";
constexpr int threads_per_rank = 128;
constexpr int round_trips = 20000;        // per repetition
constexpr int warmup = 2000;              // untimed round trips first
constexpr std::size_t message_bytes = 4;  // the operation number the host echoes (one entry)

// What the dcuda run measures, and its results (the user data of dcuda_host_run).
struct ping_run {
  int warmup;
  int round_trips;
  unsigned long long repetition_ns[repetitions];
  int pings_answered;  // counted by rank 0: every ping must come back
};

__global__ void ping_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  ping_run* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);

  if (rank == 0) {  // the same on every thread of the rank, so the pings stay collective
    int answered = 0;
    for (int repetition = -1; repetition < repetitions; ++repetition) {
      const int pings = repetition < 0 ? run->warmup : run->round_trips;
      const std::uint64_t start = dcuda::device::global_time_ns();
      for (int i = 0; i < pings; ++i) {
        dcuda_ping_host(gst);  // returns once the host has answered this ping
        ++answered;
      }
      if (threadIdx.x == 0 && repetition >= 0) {
        run->repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
      }
    }
    if (threadIdx.x == 0) run->pings_answered = answered;
  }

  dcuda_gpu_finish(gst);
}

}  // namespace

int main(int argc, char** argv) {
  const options command_line =
      parse_options(argc, argv, benchmark,
                    "device -> host -> device round trip of the command channel "
                    "(thesis table 5.2)");
  if (skip_without_gpu(benchmark)) return 0;

  dcuda_session session(command_line, ping_kernel, threads_per_rank,
                        {"--dcuda-ranks-per-device=1"});
  report out(benchmark, command_line, current_device());

  ping_run run{};
  run.warmup = warmup;
  run.round_trips = round_trips;
  session.run(run);
  if (run.pings_answered != warmup + repetitions * round_trips) {
    std::fprintf(stderr, "FAIL: %s: %d of %d pings answered\n", benchmark, run.pings_answered,
                 warmup + repetitions * round_trips);
    return 1;
  }
  std::vector<double> round_trip_us;
  for (const unsigned long long ns : run.repetition_ns) {
    round_trip_us.push_back(static_cast<double>(ns) / round_trips / 1000);
  }

  const double reference = run_mapped_flag_round_trip(threads_per_rank, warmup, round_trips);

  out.print({"host round trip (dcuda_ping_host through the command channel), " +
                 std::to_string(session.ranks()) + " rank",
             "us",
             "mapped flag",
             "counter ping-pong between a 1-block kernel and a spinning host thread through "
             "mapped pinned host memory",
             session.ranks(),
             threads_per_rank,
             1,
             {{message_bytes, median(round_trip_us), reference}}});
  out.write_json();
  return 0;
}
