// dcuda_log: lines reach standard output with the rank's prefix, all of them, in order, while
// the kernel still runs.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <sstream>
#include <thread>

#include "dcuda/device.cuh"
#include "gpu_harness.h"

using gpu_test::contains;
using gpu_test::require_gpu;
using gpu_test::run_child;
using gpu_test::run_dcuda;

namespace {

constexpr int lines_per_rank = 25;

struct no_data {
  int unused;
};

__global__ void log_load_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  dcuda_log log = dcuda_log_get(gst);
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  for (int i = 0; i < lines_per_rank; ++i) {
    // Called by every thread, as in the thesis: one line per call, from thread 0.
    log << "load " << rank << " " << i << " " << 0.5 * i << log.flush;
  }
  dcuda_gpu_finish(gst);
}

__global__ void log_format_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  if (rank == 0) {
    dcuda_log log = dcuda_log_get(gst);
    log << "int " << -42 << " unsigned " << 42u << " long " << -9000000000LL << " ull "
        << 18446744073709551615ull << log.flush;
    log << "double " << 3.14159265 << " " << 1e-7 << " " << 2.5e10 << " float " << 0.25f
        << log.flush;
    log << "bool " << true << " char " << 'x' << " ptr " << reinterpret_cast<const void*>(0xabc)
        << log.flush;
    for (int i = 0; i < 30; ++i) log << "0123456789";  // 300 characters: cut at 240
    log << log.flush;
    dcuda_log mine = dcuda_log_get_thread(gst);
    if (threadIdx.x == 5) mine << "from thread five" << mine.flush;
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_CHILD(log_under_load) {
  no_data data{};
  run_dcuda(log_load_kernel, 128, data);
}

DCUDA_CHILD(log_formats) {
  no_data data{};
  run_dcuda(log_format_kernel, 64, data, {"--dcuda-ranks-per-device=2"});
}

DCUDA_TEST(log_lines_of_all_ranks_arrive_complete_and_in_order) {
  require_gpu();
  const auto child = run_child("log_under_load");
  DCUDA_CHECK_EQ(child.exit_code, 0);
  std::map<int, int> next;  // rank -> next line index expected
  std::istringstream lines(child.output);
  std::string line;
  int total = 0;
  while (std::getline(lines, line)) {
    int rank = -1, prefix_rank = -2, index = -1;
    double half = -1;
    if (std::sscanf(line.c_str(), "[rank %d] load %d %d %lf", &prefix_rank, &rank, &index, &half) !=
        4) {
      continue;
    }
    DCUDA_CHECK_EQ(prefix_rank, rank);
    DCUDA_CHECK_EQ(index, next[rank]);  // in order, none lost, none twice
    DCUDA_CHECK_EQ(half, 0.5 * index);
    ++next[rank];
    ++total;
  }
  DCUDA_CHECK(!next.empty());
  for (const auto& [rank, count] : next) DCUDA_CHECK_EQ(count, lines_per_rank);
  DCUDA_CHECK_EQ(next.rbegin()->first + 1, static_cast<int>(next.size()));  // every rank spoke
  std::printf("  %d lines from %zu ranks\n", total, next.size());
}

DCUDA_TEST(log_formats_values_like_printf_and_names_the_rank) {
  require_gpu();
  const auto child = run_child("log_formats");
  DCUDA_CHECK_EQ(child.exit_code, 0);
  const std::string& out = child.output;
  DCUDA_CHECK(
      contains(out, "[rank 0] int -42 unsigned 42 long -9000000000 ull 18446744073709551615\n"));
  DCUDA_CHECK(contains(out, "[rank 0] double 3.14159 1e-07 2.5e+10 float 0.25\n"));
  DCUDA_CHECK(contains(out, "[rank 0] bool true char x ptr 0xabc\n"));
  DCUDA_CHECK(contains(out, "[rank 0 thread 5] from thread five\n"));
  const auto long_line = out.find("[rank 0] 0123456789");
  DCUDA_CHECK(long_line != std::string::npos);
  const auto end = out.find('\n', long_line);
  const std::string cut = out.substr(long_line + 9, end - long_line - 9);
  DCUDA_CHECK_EQ(cut.size(), 240u);
  DCUDA_CHECK(cut.substr(237) == "...");
  // One line per log statement although every thread of the rank ran it.
  std::size_t count = 0;
  for (std::size_t at = out.find("] int -42"); at != std::string::npos;
       at = out.find("] int -42", at + 1)) {
    ++count;
  }
  DCUDA_CHECK_EQ(count, 1u);
}

namespace {

// The kernel logs, then waits until the host has printed the line: only a live log lets it end.
struct live_data {
  volatile int* host_saw_line;  // mapped host memory
  int waited_ok;
};

__global__ void live_log_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  live_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  if (rank == 0) {
    dcuda_log log = dcuda_log_get(gst);
    log << "live-marker" << log.flush;
    if (threadIdx.x == 0) {
      const unsigned long long start = dcuda::device::global_time_ns();
      while (*data->host_saw_line == 0 &&
             dcuda::device::global_time_ns() - start < 20000000000ull) {
      }
      data->waited_ok = *data->host_saw_line;
    }
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(log_lines_appear_while_the_kernel_runs) {
  require_gpu();
  int* flag = nullptr;
  GPU_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(int), cudaHostAllocMapped));
  *flag = 0;
  // Standard output goes into a pipe that a reader thread watches for the marker.
  int fds[2];
  DCUDA_CHECK(pipe(fds) == 0);
  std::fflush(stdout);
  const int saved_stdout = dup(STDOUT_FILENO);
  dup2(fds[1], STDOUT_FILENO);
  std::atomic<bool> seen{false};
  std::thread reader([&] {
    std::string text;
    char buffer[256];
    ssize_t n;
    while ((n = read(fds[0], buffer, sizeof buffer)) > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
      if (!seen && contains(text, "[rank 0] live-marker\n")) {
        seen = true;
        *reinterpret_cast<volatile int*>(flag) = 1;
      }
    }
  });
  live_data data{flag, 0};
  run_dcuda(live_log_kernel, 64, data, {"--dcuda-ranks-per-device=2"});
  std::fflush(stdout);
  dup2(saved_stdout, STDOUT_FILENO);
  close(saved_stdout);
  close(fds[1]);
  reader.join();
  close(fds[0]);
  cudaFreeHost(flag);
  DCUDA_CHECK(seen.load());
  DCUDA_CHECK_EQ(data.waited_ok, 1);  // the host printed the line before the kernel ended
}
