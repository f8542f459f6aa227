// global_access_latency (extension): the global-access calls between two GPUs of one node,
// `mpirun -np 2 global_access_latency`, one process per GPU, one rank of 512 threads per GPU.
// World rank 0 (process 0) reaches into world rank 1's part of a window of DCUDA_COMM_WORLD,
// back to back, and times each repetition with its GPU's global timer; time per call, the median
// of 7 repetitions:
//   get        dcuda_get_gptr of 8 B .. 1 MiB into process 0's GPU memory, each from other lines
//              of a 4 MiB region than the get before (no get finds its bytes in L1 by an earlier
//              one, as gets of real data would not)
//   atomics    dcuda_atomic_fetch_add and dcuda_atomic_compare_swap on a 64-bit word (rank
//              calls), and dcuda_atomic_fetch_add_thread by thread 0, then __syncthreads (the
//              thread-scoped call, made as NVSHMEM's atomics are)
//   put        dcuda_put_gptr against dcuda_put of the same bytes (8 B, 1 KiB, 1 MiB), same run
//
// References, same program run (reference/peer_access_floor.cuh): the same gets and fetch-adds
// written by hand on CUDA IPC-mapped memory, one block of 512 threads. If $DCUDA_NVSHMEM_RESULT
// names the JSON file of nvshmem_latency (run before, in the same device session), its get and
// fetch-add figures are printed beside dcuda's, with the targets: a get of 8 B at most 1.2x
// NVSHMEM's, a fetch-add at most NVSHMEM's (the thread-scoped call, like NVSHMEM's made by thread
// 0 and followed by __syncthreads; the rank call's figure is printed beside it).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/anchor_figures.h"
#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/statistics.h"
#include "dcuda/detail/device/clock.cuh"
#include "dcuda/device.cuh"
#include "reference/peer_access_floor.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "global_access_latency";
constexpr int threads_per_rank = 512;
constexpr std::size_t largest_get = MiB;
// Rank 1's part: the region the gets cycle through, then the atomics' word. Rank 0's: the puts'
// source at 128.
constexpr std::size_t word_offset = get_region_bytes;
constexpr std::size_t part_bytes = get_region_bytes + 256;

enum class operation : int { get, fetch_add, compare_swap, fetch_add_thread, put, put_gptr };

struct run_data {
  unsigned char* part;     // this process's rank's part of the window
  unsigned char* landing;  // process 0: where gets land
  operation what;
  int size;
  int warmup;
  int iterations;
  unsigned long long repetition_ns[repetitions];
  unsigned long long sink;  // the atomics' values, so that none is dropped
};

// The timed calls of one operation, a function of their own per operation: the loop of one
// operation keeps its values in registers of its own, as NVSHMEM's and the reference's kernels
// (one operation each) do, instead of sharing a loop with the block copy of the largest get.
template <operation What>
__device__ __noinline__ void timed_calls(dcuda_state& gst, run_data* run, dcuda_win win) {
  const dcuda_gptr from = dcuda_gptr_of(win, 1, 0);
  const dcuda_gptr word = dcuda_gptr_of(win, 1, word_offset);
  const int size = run->size;
  unsigned long long seen = 0;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int calls = repetition < 0 ? run->warmup : run->iterations;
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int i = 0; i < calls; ++i) {
      if constexpr (What == operation::get) {  // each get from other lines (peer_access_floor)
        dcuda_get_gptr(gst, dcuda_gptr_of(win, 1, get_offset(i, static_cast<std::size_t>(size))),
                       size, run->landing);
      } else if constexpr (What == operation::fetch_add) {
        seen += dcuda_atomic_fetch_add(gst, word, 1ull);
      } else if constexpr (What == operation::compare_swap) {
        // Each swap expects what the last one left, so that every one after the first succeeds
        // (the word starts at the memset's bytes).
        const unsigned long long found = dcuda_atomic_compare_swap(gst, word, seen, seen + 1);
        seen = found == seen ? seen + 1 : found;
      } else if constexpr (What == operation::fetch_add_thread) {
        if (threadIdx.x == 0) seen += dcuda_atomic_fetch_add_thread(gst, word, 1ull);
        __syncthreads();
      } else if constexpr (What == operation::put) {
        dcuda_put(gst, win, 1, 0, size, run->part + 128);
      } else {
        dcuda_put_gptr(gst, from, size, run->part + 128);
      }
    }
    if (threadIdx.x == 0 && repetition >= 0) {
      run->repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }
  if (threadIdx.x == 0) run->sink = seen;
}

__global__ void __launch_bounds__(threads_per_rank)
    global_access_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, run->part, static_cast<int>(part_bytes), &win);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  if (rank == 0) {
    switch (run->what) {
      case operation::get:
        timed_calls<operation::get>(gst, run, win);
        break;
      case operation::fetch_add:
        timed_calls<operation::fetch_add>(gst, run, win);
        break;
      case operation::compare_swap:
        timed_calls<operation::compare_swap>(gst, run, win);
        break;
      case operation::fetch_add_thread:
        timed_calls<operation::fetch_add_thread>(gst, run, win);
        break;
      case operation::put:
        timed_calls<operation::put>(gst, run, win);
        break;
      case operation::put_gptr:
        timed_calls<operation::put_gptr>(gst, run, win);
        break;
    }
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

// As remote_latency's peer path: at most 128 MiB per repetition, 100 to 20000 calls.
int calls_for(std::size_t size) {
  return static_cast<int>(
      std::clamp<std::size_t>(128 * MiB / std::max<std::size_t>(size, 1), 100, 20000));
}

// One measurement (collective): `what` of `size` bytes, time per call on both processes.
figure measure(dcuda_session& session, const mpi_world& world, device_bytes& part,
               device_bytes& landing, operation what, std::size_t size) {
  BENCH_CUDA_CHECK(cudaMemset(part.get(), world.process() + 1, part_bytes));
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  const int calls = calls_for(size);
  run_data data{
      part.get(), landing.get(), what, static_cast<int>(size), std::max(calls / 10, 10), calls, {},
      0};
  session.run(data);
  figure result{};
  if (world.process() == 0) {
    std::vector<double> per_call_us;
    for (const unsigned long long ns : data.repetition_ns) {
      per_call_us.push_back(static_cast<double>(ns) / calls / 1000);
    }
    result = summary(per_call_us);
  }
  return world.from_process0(result);
}

table make_table(const std::string& title, const std::string& reference_name,
                 const std::string& reference_detail, int reference_blocks) {
  return {title + ", 1 rank of " + std::to_string(threads_per_rank) +
              " threads per GPU, 2 GPUs (peer path)",
          "us",
          reference_name,
          reference_detail,
          2,
          threads_per_rank,
          reference_blocks,
          {}};
}

double value_at(const table& t, std::size_t size) {
  for (const row& r : t.rows) {
    if (r.size_bytes == size) return r.dcuda;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  const options command_line = parse_options(
      argc, argv, benchmark,
      "dcuda_get, the remote atomics and dcuda_put_gptr between the GPUs of 2 processes; run it "
      "as mpirun -np 2");
  if (skip_without_two_gpus(world, /*one_node=*/true)) return 0;
  BENCH_CUDA_CHECK(cudaSetDevice(world.local_index()));
  require_distinct_gpus(world);

  std::optional<report> out;
  std::vector<std::size_t> get_sizes;
  for (std::size_t size = 8; size <= largest_get; size *= 8) get_sizes.push_back(size);
  get_sizes.push_back(largest_get);
  const std::vector<std::size_t> put_sizes{8, 1024, largest_get};

  // The references first, while no dcuda run holds the GPUs.
  std::vector<figure> get_floor;
  figure atomic_floor{};
  {
    peer_access_floor floor(world, largest_get);
    for (const std::size_t size : get_sizes) {
      const int calls = calls_for(size);
      get_floor.push_back(
          floor.run(threads_per_rank, static_cast<int>(size), std::max(calls / 10, 10), calls));
    }
    atomic_floor = floor.run(threads_per_rank, 0, 2000, 20000);
  }

  std::vector<figure> gets, puts, gptr_puts;
  figure fetch_add{}, compare_swap{}, fetch_add_thread{};
  {
    device_bytes part(part_bytes);
    device_bytes landing(largest_get);
    dcuda_session session(command_line, global_access_kernel, threads_per_rank,
                          {"--dcuda-ranks-per-device=1", "--dcuda-force-network=0"});
    if (session.ranks() != 2) {
      fail_job(benchmark,
               "needs 2 ranks, one per GPU; found " + describe_rank_info(session.rank_info()));
    }
    for (const std::size_t size : get_sizes) {
      gets.push_back(measure(session, world, part, landing, operation::get, size));
    }
    fetch_add = measure(session, world, part, landing, operation::fetch_add, 8);
    compare_swap = measure(session, world, part, landing, operation::compare_swap, 8);
    fetch_add_thread = measure(session, world, part, landing, operation::fetch_add_thread, 8);
    for (const std::size_t size : put_sizes) {
      puts.push_back(measure(session, world, part, landing, operation::put, size));
      gptr_puts.push_back(measure(session, world, part, landing, operation::put_gptr, size));
    }
  }

  if (!world.prints()) return 0;
  out.emplace(benchmark, command_line, current_device());
  const std::string floor_detail =
      "the same gets written by hand: one 512-thread block copies from the other GPU's memory "
      "(CUDA IPC-mapped) with loads that skip L1, thread 0 alone up to 16 B, then "
      "__syncthreads; successive gets of both from other lines of 4 MiB";
  table get_table = make_table("get (dcuda_get_gptr), per call", "peer load", floor_detail, 1);
  for (std::size_t i = 0; i < get_sizes.size(); ++i) {
    get_table.rows.push_back(
        {get_sizes[i], gets[i].median, get_floor[i].median, gets[i].min, gets[i].max});
  }
  out->print(get_table);
  table atomic_table = make_table(
      "64-bit remote atomics (dcuda_atomic_fetch_add; dcuda_atomic_compare_swap in the second "
      "row, its size column 9), per call",
      "peer atomic",
      "thread 0 of one 512-thread block: a relaxed system-scope fetch_add on the other GPU's word "
      "(CUDA IPC-mapped), then __syncthreads",
      1);
  atomic_table.rows.push_back(
      {8, fetch_add.median, atomic_floor.median, fetch_add.min, fetch_add.max});
  atomic_table.rows.push_back(
      {9, compare_swap.median, atomic_floor.median, compare_swap.min, compare_swap.max});
  out->print(atomic_table);
  table thread_atomic_table = make_table(
      "64-bit remote fetch-add by thread 0 (dcuda_atomic_fetch_add_thread, then __syncthreads), "
      "per call",
      "peer atomic",
      "thread 0 of one 512-thread block: a relaxed system-scope fetch_add on the other GPU's word "
      "(CUDA IPC-mapped), then __syncthreads",
      1);
  thread_atomic_table.rows.push_back({8, fetch_add_thread.median, atomic_floor.median,
                                      fetch_add_thread.min, fetch_add_thread.max});
  out->print(thread_atomic_table);
  table put_table =
      make_table("put through a global pointer (dcuda_put_gptr), per call", "dcuda_put",
                 "dcuda_put of the same bytes to the same rank, same run", 0);
  for (std::size_t i = 0; i < put_sizes.size(); ++i) {
    put_table.rows.push_back(
        {put_sizes[i], gptr_puts[i].median, puts[i].median, gptr_puts[i].min, gptr_puts[i].max});
  }
  out->print(put_table);

  // NVSHMEM's figures, where nvshmem_latency left them.
  const char* nvshmem_file = std::getenv("DCUDA_NVSHMEM_RESULT");
  std::map<std::size_t, double> nvshmem_get, nvshmem_atomic;
  if (nvshmem_file != nullptr && nvshmem_file[0] != '\0') {
    nvshmem_get = anchor_figures(nvshmem_file, {"NVSHMEM get", "512 threads"});
    nvshmem_atomic = anchor_figures(nvshmem_file, {"NVSHMEM atomic fetch-add", "512 threads"});
    const std::string file = std::filesystem::path(nvshmem_file).filename().string();
    table against_get = make_table(
        "get (dcuda_get_gptr), per call", "NVSHMEM",
        "NVSHMEM nvshmemx_getmem_block, one 512-thread block, from nvshmem_latency (" + file + ")",
        1);
    for (std::size_t i = 0; i < get_sizes.size(); ++i) {
      const auto found = nvshmem_get.find(get_sizes[i]);
      if (found != nvshmem_get.end()) {
        against_get.rows.push_back({get_sizes[i], gets[i].median, found->second});
      }
    }
    const std::string nvshmem_atomic_detail =
        "NVSHMEM nvshmem_uint64_atomic_fetch_add by thread 0, then __syncthreads, from "
        "nvshmem_latency (" +
        file + ")";
    table against_atomic = make_table(
        "64-bit remote fetch-add by thread 0 (dcuda_atomic_fetch_add_thread, then __syncthreads), "
        "per call",
        "NVSHMEM", nvshmem_atomic_detail, 1);
    table rank_against_atomic =
        make_table("64-bit remote fetch-add (dcuda_atomic_fetch_add, a rank call), per call",
                   "NVSHMEM", nvshmem_atomic_detail, 1);
    const auto atomic = nvshmem_atomic.find(8);
    if (atomic != nvshmem_atomic.end()) {
      against_atomic.rows.push_back({8, fetch_add_thread.median, atomic->second});
      rank_against_atomic.rows.push_back({8, fetch_add.median, atomic->second});
    }
    if (against_get.rows.empty() || against_atomic.rows.empty()) {
      std::printf("# %s holds no NVSHMEM get or fetch-add figures; no NVSHMEM tables\n\n",
                  file.c_str());
    } else {
      out->print(against_get);
      out->print(against_atomic);
      out->print(rank_against_atomic);
      out->check({"get of 8 B, peer path, against NVSHMEM getmem (ratio)", "ratio",
                  value_at(get_table, 8) / nvshmem_get.at(8), 1.2, true});
      out->check(
          {"64-bit fetch-add by thread 0, peer path, against NVSHMEM atomic_fetch_add "
           "(ratio)",
           "ratio", fetch_add_thread.median / atomic->second, 1.0, true});
    }
  } else {
    std::printf("# DCUDA_NVSHMEM_RESULT is not set: no NVSHMEM tables\n\n");
  }
  out->check({"put of 8 B through a global pointer, over dcuda_put (difference)", "us",
              gptr_puts[0].median - puts[0].median, 0.1, true});
  out->check({"put of 1 MiB through a global pointer, bandwidth against dcuda_put (ratio)", "ratio",
              puts.back().median / gptr_puts.back().median, 0.95, false});
  out->write_json();
  return 0;
}
