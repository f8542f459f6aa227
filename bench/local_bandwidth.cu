// local_bandwidth: thesis table 5.4, rows 1-2 (device-local bandwidth of notified access).
//
//   one pair   rank 0 sends to rank 1; the other ranks of the GPU idle (the thesis's "1/52 ranks")
//   all ranks  every rank r sends to rank (r + 1) % n at once
//
// A pass: each sender issues K dcuda_put_notify of `size` bytes back to back, to rotating
// offsets of its target's window; each receiver waits for the K notifications and answers with
// one dcuda_notify; the sender waits for that answer. Rank 0 times each repetition of passes
// between two barriers of all ranks, so the time covers every sender. Bandwidth is payload
// bytes / time (1 GB = 1e9 B), the median over the repetitions.
//
// Working sets are sized to be honest about caches: at large sizes each sender reads, and each
// receiver is written, well beyond the L2 cache (50 MB on an H100), as a large cudaMemcpy is.
//
// Reference, same run: memcpy_bandwidth.cuh, cudaMemcpyAsync device to device of the bytes of
// one pass (at least 256 MiB from 1 MiB on, so that it is bandwidth-bound; at most 1 GiB).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/message_sizes.h"
#include "common/notified_passes.cuh"
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "dcuda/detail/device/clock.cuh"
#include "reference/memcpy_bandwidth.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "local_bandwidth";
// Bandwidth wants many threads per rank. The launch bound caps the kernel at 64 registers per
// thread, without which a 1024-thread rank would not fit on a multiprocessor at all.
constexpr int threads_per_rank = 1024;

enum class senders : int { one_pair, all_ranks };

// How one size is measured: what a pass is, how many passes a repetition makes, and the memory
// each rank exposes ([source: slots * size][destination: slots * size]).
transfer_plan plan_for(senders who, std::size_t size, int ranks) {
  const bool all = who == senders::all_ranks;
  const std::size_t sending_ranks = all ? static_cast<std::size_t>(ranks) : 1;
  transfer_plan plan{};
  // 256 puts per pass while they are small (the answer's latency is spread over many puts),
  // fewer as they grow: 16 puts of 4 MiB.
  plan.puts_per_pass = static_cast<int>(std::clamp<std::size_t>(64 * MiB / size, 1, 256));
  // Each receiver gets 64 MiB of distinct destinations with one pair; with all ranks, 512 MiB
  // over all receivers (the whole GPU's traffic is what has to leave the L2 cache).
  const std::size_t destinations = all ? std::max(size, 512 * MiB / sending_ranks) : 64 * MiB;
  plan.slots = static_cast<int>(std::clamp<std::size_t>(
      destinations / size, 1, static_cast<std::size_t>(plan.puts_per_pass)));
  plan.pass_bytes = sending_ranks * static_cast<std::size_t>(plan.puts_per_pass) * size;
  // A repetition moves ~1 GiB (one pair) or ~16 GiB (all ranks), but a rank makes at most
  // 20000 puts in it, which bounds the time of small sizes.
  const std::size_t repetition_bytes = all ? 16 * GiB : GiB;
  const std::size_t by_bytes = repetition_bytes / plan.pass_bytes;
  const std::size_t by_puts = 20000 / static_cast<std::size_t>(plan.puts_per_pass);
  plan.passes = static_cast<int>(std::max<std::size_t>(1, std::min(by_bytes, by_puts)));
  plan.warmup_passes = std::max(1, plan.passes / 4);
  plan.window_bytes = 2 * static_cast<std::size_t>(plan.slots) * size;
  return plan;
}

// Bytes each cudaMemcpy of the reference moves for a pass of `pass_bytes`.
struct bandwidth_run {
  senders who;
  int size;
  transfer_plan plan;
  unsigned char* windows;  // rank r's window starts at r * window_stride
  std::size_t window_stride;
  unsigned long long repetition_ns[repetitions];  // written by rank 0
  int mismatches;                                 // receivers whose bytes were wrong
};

__global__ void __launch_bounds__(threads_per_rank) bandwidth_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  bandwidth_run* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int rank = 0;
  int ranks = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &ranks);
  const int size = run->size;
  const transfer_plan plan = run->plan;

  const bool all = run->who == senders::all_ranks;
  const bool sends = all || rank == 0;
  const bool receives = all || rank == 1;
  const int target = (rank + 1) % ranks;
  const int origin = (rank + ranks - 1) % ranks;
  unsigned char* window = sends || receives
                              ? run->windows + static_cast<std::size_t>(rank) * run->window_stride
                              : nullptr;
  // Barriers are made by every rank; rank 0 times.
  run_notified_passes(gst, pass_role{sends, receives, target, origin, rank == 0}, plan, size,
                      window, rank, run->repetition_ns, &run->mismatches);
  dcuda_gpu_finish(gst);
}

[[noreturn]] void fail(const std::string& what) {
  std::fflush(stdout);
  std::fprintf(stderr, "FAIL: %s: %s\n", benchmark, what.c_str());
  std::exit(1);
}

double dcuda_gigabytes_per_second(dcuda_session& session, senders who, std::size_t size,
                                  const device_bytes& windows, std::size_t window_stride) {
  bandwidth_run run{};
  run.who = who;
  run.size = static_cast<int>(size);
  run.plan = plan_for(who, size, session.ranks());
  run.windows = windows.get();
  run.window_stride = window_stride;
  BENCH_CUDA_CHECK(cudaMemset(windows.get(), 0, windows.size()));
  session.run(run);
  if (run.mismatches != 0) {
    fail(std::to_string(run.mismatches) + " rank(s) received wrong data (" + std::to_string(size) +
         " B, " + (who == senders::all_ranks ? "all ranks" : "one pair") + ")");
  }
  std::vector<double> rates;
  for (const unsigned long long ns : run.repetition_ns) {
    rates.push_back(static_cast<double>(run.plan.pass_bytes) * run.plan.passes /
                    static_cast<double>(ns));  // bytes per ns = GB/s
  }
  return median(rates);
}

}  // namespace

int main(int argc, char** argv) {
  const options command_line = parse_options(
      argc, argv, benchmark, "device-local bandwidth of notified access (thesis table 5.4)");
  if (skip_without_gpu(benchmark)) return 0;

  dcuda_session session(command_line, bandwidth_kernel, threads_per_rank);
  const int ranks = session.ranks();
  if (ranks < 2) fail("dcuda runs only " + std::to_string(ranks) + " rank(s); 2 are needed");
  report out(benchmark, command_line, current_device());

  // One allocation holds the windows of either pattern, laid out for its largest plan: one pair
  // needs two large windows, all ranks need many smaller ones.
  const std::vector<std::size_t> sizes = message_sizes();
  const auto window_stride = [&](senders who) {
    std::size_t stride = 0;
    for (const std::size_t size : sizes) {
      stride = std::max(stride, plan_for(who, size, ranks).window_bytes);
    }
    return stride;
  };
  const device_bytes windows(
      std::max(2 * window_stride(senders::one_pair),
               static_cast<std::size_t>(ranks) * window_stride(senders::all_ranks)));
  memcpy_reference reference(GiB);

  double lowest_large_ratio = std::numeric_limits<double>::infinity();
  for (const senders who : {senders::one_pair, senders::all_ranks}) {
    const bool all = who == senders::all_ranks;
    table results{all ? "notified access bandwidth, all " + std::to_string(ranks) +
                            " ranks send at once (rank r -> r+1)"
                      : "notified access bandwidth, one pair (rank 0 -> rank 1) of " +
                            std::to_string(ranks) + " ranks",
                  "GB/s",
                  "cudaMemcpy",
                  "cudaMemcpyAsync device to device of the bytes of one pass (>= 256 MiB from "
                  "1 MiB on, <= 1 GiB)",
                  ranks,
                  threads_per_rank,
                  0,
                  {}};
    for (const std::size_t size : sizes) {
      const double dcuda =
          dcuda_gigabytes_per_second(session, who, size, windows, window_stride(who));
      const std::size_t copy_bytes =
          reference_copy_bytes(size, plan_for(who, size, ranks).pass_bytes);
      results.rows.push_back({size, dcuda, reference.gigabytes_per_second(copy_bytes)});
      const row& last = results.rows.back();
      if (all && size >= MiB) {
        lowest_large_ratio = std::min(lowest_large_ratio, last.dcuda / last.reference);
      }
    }
    out.print(results);
  }
  // Our issue's target: with all ranks sending, at least 80% of cudaMemcpy from 1 MiB on.
  out.check({"all-ranks bandwidth / cudaMemcpy, lowest over sizes >= 1 MiB", "ratio",
             lowest_large_ratio, 0.8, false});
  out.write_json();
  return 0;
}
