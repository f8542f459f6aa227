// nvshmem_iput: NVSHMEM's strided put (iput) between the same two GPUs, the anchor that dcuda's
// typed puts are compared with (typed_put_bandwidth). `mpirun -np 2 nvshmem_iput`, one process
// (PE) per GPU of one node. Built only when NVSHMEM is found (bench/CMakeLists.txt).
//
// Each PE's symmetric heap holds two N x N row-major matrices of doubles, [source][destination],
// N = 1024, 2048, 4096; PE 0's source holds the double i at element i. One block of 1024 threads
// on PE 0 moves, per operation, one of three layouts of its source into PE 1's destination:
//
//   column  one column (column N/4): N doubles, stride N on both sides; one iput (8 N bytes)
//   V       the column block of typed_put_bandwidth: the N/2 columns from column N/4, each an
//           iput of N doubles, stride N on both sides (4 N^2 bytes)
//   X       the transpose: column j of the source into row j of the destination, an iput of N
//           doubles with source stride N and target stride 1, for every j (8 N^2 bytes)
//
// Three ways of calling the iput are measured, and the fastest for each layout and N is the
// figure (the strictest anchor for dcuda):
//
//   threads  nvshmem_double_iput: each thread calls it for its share of the operation's iputs
//            (thread t takes iputs t, t + 1024, ..; where there are fewer iputs than threads,
//            each iput is cut into slices of consecutive elements, one per thread)
//   warps    nvshmemx_double_iput_warp: likewise, one share per warp
//   block    nvshmemx_double_iput_block: the whole block calls it for each iput in turn
//
// Over NVLink (P2P) every iput is a loop of 8-byte loads and stores to the mapped peer memory
// (NVSHMEM's device code; it has no network path). The ways differ in which thread stores which
// element and in how often the block waits for itself. For X the lanes of a warp store 32
// consecutive doubles of one destination row (warps, block) or one double into each of 32 rows
// (threads); for V the other way round (threads: 32 neighbouring columns, a run of 256 bytes per
// row); a lone column is stored one double per row by every way. The block way synchronises its
// 1024 threads before and after every iput. Which is fastest is measured, not assumed.
//
// A pass is K operations back to back into the same destination, then (thread 0 of PE 0, after
// the block's __syncthreads) nvshmem_quiet and nvshmemx_signal_op setting PE 1's signal to the
// pass number; PE 1 waits for it (nvshmem_signal_wait_until) and answers the same way, and PE 0
// waits for the answer before the next pass. K and the passes as typed_put_bandwidth's: ~64 MiB
// per pass (1..64 operations), ~512 MiB per repetition (1..64 passes). PE 0 times each repetition
// with its GPU's global timer; time per operation = repetition / operations, bandwidth = bytes
// moved / repetition (1 GB = 1e9 B), the median of 7 repetitions after an untimed one.
//
// Reference, same kernel: nvshmemx_putmem_block of the same number of bytes, contiguous, from
// the start of the source matrix into the start of the destination matrix, the same passes,
// repetitions alternating with the iput ones. Before the timing, every way (and the reference)
// moves one operation into an untouched destination, which PE 1 checks whole: a wrong element
// prints FAIL and ends the job with status 1.
//
// Output: the tables (the first column NVSHMEM's figure, JSON key "dcuda", "measured": "NVSHMEM
// <version>"), <dir>/nvshmem_iput.json, and <dir>/nvshmem_iput_cases.json: one line per layout and
// N with the figures of every way, for typed_put_bandwidth to read ($DCUDA_NVSHMEM_IPUT_RESULT,
// bench/README.md). NVSHMEM starts from a unique id that PE 0 broadcasts over MPI, as in
// nvshmem_latency; NVLink multicast is turned off (NVSHMEM_DISABLE_NVLS=1): nothing here uses it.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/nvshmem_start.h"
#include "common/statistics.h"
#include "dcuda/detail/device/clock.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "nvshmem_iput";
constexpr const char* cases_file = "nvshmem_iput_cases.json";
constexpr int block_threads = 1024;  // as typed_put_bandwidth's rank
constexpr int warp_threads = 32;
constexpr int sizes[] = {1024, 2048, 4096};
constexpr int largest_n = 4096;
constexpr int target_pe = 1;
constexpr double untouched = -1.0;  // what the destination holds before the check's operation

// ---- The layouts and the ways of moving them ----------------------------------------------------

enum class layout : int { column, column_block, transpose };
constexpr layout layouts[] = {layout::column, layout::column_block, layout::transpose};

const char* layout_key(layout l) {  // the cases file's name (matrix_layouts.h's, for V and X)
  switch (l) {
    case layout::column:
      return "column";
    case layout::column_block:
      return "column_block";
    case layout::transpose:
      return "transpose";
  }
  return "?";
}

const char* layout_detail(layout l) {
  switch (l) {
    case layout::column:
      return "one column of an N x N row-major matrix of doubles (column N/4: N doubles, stride N "
             "on both sides, one iput), Size = 8 N";
    case layout::column_block:
      return "V, the column block of an N x N row-major matrix of doubles (the N/2 columns from "
             "column N/4, each an iput of N doubles, stride N on both sides), Size = 4 N^2";
    case layout::transpose:
      return "X, the transpose of an N x N row-major matrix of doubles (column j of the source "
             "into row j of the target: N iputs of N doubles, source stride N, target stride 1), "
             "Size = 8 N^2";
  }
  return "?";
}

// contiguous: the reference; the others: the ways of calling the iput.
enum class method : int { contiguous, threads, warps, block };
constexpr int method_count = 4;
constexpr method iput_methods[] = {method::threads, method::warps, method::block};

const char* method_call(method m) {
  switch (m) {
    case method::contiguous:
      return "nvshmemx_putmem_block";
    case method::threads:
      return "nvshmem_double_iput";
    case method::warps:
      return "nvshmemx_double_iput_warp";
    case method::block:
      return "nvshmemx_double_iput_block";
  }
  return "?";
}

const char* method_key(method m) {
  switch (m) {
    case method::contiguous:
      return "contiguous";
    case method::threads:
      return "threads";
    case method::warps:
      return "warps";
    case method::block:
      return "block";
  }
  return "?";
}

// One operation of a case: `iputs` iputs of n doubles; iput k moves the elements
// source[source_origin + k * source_step + i * source_stride] to
// destination[target_origin + k * target_step + i * target_stride], i < n.
struct case_plan {
  layout kind;
  int n;
  std::int64_t bytes;  // moved by one operation (also the contiguous put's size)
  int iputs;
  std::int64_t source_origin, source_step, source_stride;
  std::int64_t target_origin, target_step, target_stride;
  int operations_per_pass;
  int passes;  // per repetition
  int warmup_passes;
};

case_plan plan_for(layout kind, int n) {
  const std::int64_t size = n;
  case_plan plan{};
  plan.kind = kind;
  plan.n = n;
  switch (kind) {
    case layout::column:
      plan.iputs = 1;
      plan.source_origin = plan.target_origin = size / 4;
      plan.source_stride = plan.target_stride = size;
      break;
    case layout::column_block:
      plan.iputs = n / 2;
      plan.source_origin = plan.target_origin = size / 4;
      plan.source_step = plan.target_step = 1;
      plan.source_stride = plan.target_stride = size;
      break;
    case layout::transpose:
      plan.iputs = n;
      plan.source_step = 1;
      plan.source_stride = size;
      plan.target_step = size;
      plan.target_stride = 1;
      break;
  }
  plan.bytes =
      static_cast<std::int64_t>(plan.iputs) * size * static_cast<std::int64_t>(sizeof(double));
  // As typed_put_bandwidth: ~64 MiB per pass (1..64 operations), ~512 MiB per repetition
  // (1..64 passes).
  const auto bytes = static_cast<std::uint64_t>(plan.bytes);
  plan.operations_per_pass = static_cast<int>(std::clamp<std::uint64_t>(64 * MiB / bytes, 1, 64));
  plan.passes = static_cast<int>(std::clamp<std::uint64_t>(
      512 * MiB / (bytes * static_cast<std::uint64_t>(plan.operations_per_pass)), 1, 64));
  plan.warmup_passes = std::max(1, plan.passes / 4);
  return plan;
}

// The value PE 1's destination holds at element `index` after one operation of `m` (PE 0's
// source holds the double i at element i).
__host__ __device__ inline double expected_value(const case_plan& plan, method m,
                                                 std::int64_t index) {
  const std::int64_t n = plan.n;
  const std::int64_t row = index / n;
  const std::int64_t column = index % n;
  if (m == method::contiguous) {
    return index < plan.bytes / static_cast<std::int64_t>(sizeof(double))
               ? static_cast<double>(index)
               : untouched;
  }
  switch (plan.kind) {
    case layout::column:
      return column == n / 4 ? static_cast<double>(index) : untouched;
    case layout::column_block:
      return column >= n / 4 && column < n / 4 + n / 2 ? static_cast<double>(index) : untouched;
    case layout::transpose:
      return static_cast<double>(column * n + row);
  }
  return untouched;
}

// ---- The device side ----------------------------------------------------------------------------

// The share of one operation's iputs of thread group `group` of `groups` (threads or warps): the
// iputs are dealt out in turn; where there are fewer iputs than groups, each is cut into slices
// of consecutive elements so that every group has work (consecutive groups take consecutive
// iputs of a slice, as consecutive columns lie side by side).
template <bool by_warps>
__device__ inline void iput_share(const case_plan& plan, double* destination, const double* source,
                                  std::int64_t group, std::int64_t groups) {
  const std::int64_t n = plan.n;
  const std::int64_t iputs = plan.iputs;
  const std::int64_t slices = groups > iputs ? groups / iputs : 1;
  const std::int64_t per_slice = (n + slices - 1) / slices;
  for (std::int64_t item = group; item < iputs * slices; item += groups) {
    const std::int64_t k = item % iputs;
    const std::int64_t first = item / iputs * per_slice;
    if (first >= n) continue;  // the same for every thread of a warp
    const auto count = static_cast<std::size_t>(per_slice < n - first ? per_slice : n - first);
    double* const to =
        destination + plan.target_origin + k * plan.target_step + first * plan.target_stride;
    const double* const from =
        source + plan.source_origin + k * plan.source_step + first * plan.source_stride;
    if constexpr (by_warps) {
      nvshmemx_double_iput_warp(to, from, plan.target_stride, plan.source_stride, count, target_pe);
    } else {
      nvshmem_double_iput(to, from, plan.target_stride, plan.source_stride, count, target_pe);
    }
  }
}

// All threads of PE 0's block: one operation of the case by `m`, into PE 1's destination.
__device__ inline void move_once(method m, const case_plan& plan, double* destination,
                                 const double* source) {
  switch (m) {
    case method::contiguous:
      nvshmemx_putmem_block(destination, source, static_cast<std::size_t>(plan.bytes), target_pe);
      break;
    case method::threads:
      iput_share<false>(plan, destination, source, threadIdx.x, blockDim.x);
      break;
    case method::warps:
      iput_share<true>(plan, destination, source, threadIdx.x / warp_threads,
                       blockDim.x / warp_threads);
      break;
    case method::block:
      for (std::int64_t k = 0; k < plan.iputs; ++k) {
        nvshmemx_double_iput_block(destination + plan.target_origin + k * plan.target_step,
                                   source + plan.source_origin + k * plan.source_step,
                                   plan.target_stride, plan.source_stride,
                                   static_cast<std::size_t>(plan.n), target_pe);
      }
      break;
  }
}

// PE 0, the check: one operation, complete at PE 1 when the kernel has ended.
__global__ void __launch_bounds__(block_threads)
    one_operation_kernel(method m, case_plan plan, double* destination, const double* source) {
  move_once(m, plan, destination, source);
  __syncthreads();
  if (threadIdx.x == 0) nvshmem_quiet();
}

struct timing_args {
  case_plan plan;
  double* source;         // symmetric
  double* destination;    // symmetric: PE 1's is written
  std::uint64_t* ready;   // symmetric: PE 0 sets PE 1's to the pass number
  std::uint64_t* answer;  // symmetric: PE 1 sets PE 0's to the pass number
  int pe;
  unsigned long long* repetition_ns;  // [method_count][repetitions], written by PE 0
};

// Both PEs: every method's passes, the methods alternating within each repetition (the first
// repetition is the warm-up). Both signals are 0 at the start.
__global__ void __launch_bounds__(block_threads) timing_kernel(timing_args args) {
  const case_plan& plan = args.plan;
  std::uint64_t pass = 0;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int passes = repetition < 0 ? plan.warmup_passes : plan.passes;
    for (int m = 0; m < method_count; ++m) {
      const std::uint64_t start = dcuda::device::global_time_ns();
      for (int p = 0; p < passes; ++p) {
        ++pass;
        if (args.pe == 0) {
          for (int k = 0; k < plan.operations_per_pass; ++k) {
            move_once(static_cast<method>(m), plan, args.destination, args.source);
          }
          __syncthreads();  // every thread's stores are issued before thread 0's quiet
          if (threadIdx.x == 0) {
            nvshmem_quiet();
            nvshmemx_signal_op(args.ready, pass, NVSHMEM_SIGNAL_SET, target_pe);
            nvshmem_signal_wait_until(args.answer, NVSHMEM_CMP_GE, pass);
          }
          __syncthreads();
        } else if (threadIdx.x == 0) {
          nvshmem_signal_wait_until(args.ready, NVSHMEM_CMP_GE, pass);
          nvshmemx_signal_op(args.answer, pass, NVSHMEM_SIGNAL_SET, 0);
        }
      }
      if (args.pe == 0 && threadIdx.x == 0 && repetition >= 0) {
        args.repetition_ns[m * repetitions + repetition] = dcuda::device::global_time_ns() - start;
      }
    }
  }
}

// Element i of the source matrix: the double i; of the destination matrix: `untouched`.
__global__ void prepare_kernel(double* source, double* destination, std::int64_t elements) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < elements; i += step) {
    source[i] = static_cast<double>(i);
    destination[i] = untouched;
  }
}

struct check_result {
  unsigned long long wrong;
  unsigned long long first;  // the lowest wrong element (ULLONG_MAX: none)
};

// PE 1: counts the wrong elements of the whole destination matrix.
__global__ void check_kernel(case_plan plan, method m, const double* destination,
                             check_result* result) {
  const std::int64_t elements = static_cast<std::int64_t>(plan.n) * plan.n;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0;
  unsigned long long first = ULLONG_MAX;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < elements; i += step) {
    if (destination[i] != expected_value(plan, m, i)) {
      if (wrong == 0) first = static_cast<unsigned long long>(i);
      ++wrong;
    }
  }
  if (wrong != 0) {
    atomicAdd(&result->wrong, wrong);
    atomicMin(&result->first, first);
  }
}

// ---- The host side ------------------------------------------------------------------------------

// The symmetric memory: [source][destination] of the largest N, then the two signals.
class symmetric_buffers {
 public:
  symmetric_buffers() {
    base_ = static_cast<unsigned char*>(nvshmem_malloc(2 * matrix_bytes + 256));
    if (base_ == nullptr) {
      fail_job(benchmark, "nvshmem_malloc of " + std::to_string(2 * matrix_bytes + 256) +
                              " bytes failed (NVSHMEM_SYMMETRIC_SIZE?)");
    }
  }
  ~symmetric_buffers() { nvshmem_free(base_); }
  symmetric_buffers(const symmetric_buffers&) = delete;
  symmetric_buffers& operator=(const symmetric_buffers&) = delete;

  double* source() const { return reinterpret_cast<double*>(base_); }
  double* destination() const { return reinterpret_cast<double*>(base_ + matrix_bytes); }
  std::uint64_t* ready() const {
    return reinterpret_cast<std::uint64_t*>(base_ + 2 * matrix_bytes);
  }
  std::uint64_t* answer() const { return ready() + 1; }

 private:
  static constexpr std::size_t matrix_bytes =
      static_cast<std::size_t>(largest_n) * largest_n * sizeof(double);
  unsigned char* base_ = nullptr;
};

void prepare(const symmetric_buffers& buffers, int n) {
  prepare_kernel<<<1024, 256>>>(buffers.source(), buffers.destination(),
                                static_cast<std::int64_t>(n) * n);
  BENCH_CUDA_CHECK(cudaGetLastError());
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
}

std::string case_text(const case_plan& plan) {
  return std::string(layout_key(plan.kind)) + ", N = " + std::to_string(plan.n);
}

// One operation of `m` into PE 1's untouched destination, which PE 1 checks whole (collective).
// A wrong element ends the job.
void check_method(const mpi_world& world, const symmetric_buffers& buffers, const case_plan& plan,
                  method m, const device_bytes& result) {
  prepare(buffers, plan.n);
  nvshmem_barrier_all();  // PE 1's destination is untouched before PE 0 puts
  if (world.process() == 0) {
    one_operation_kernel<<<1, block_threads>>>(m, plan, buffers.destination(), buffers.source());
    BENCH_CUDA_CHECK(cudaGetLastError());
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  }
  nvshmem_barrier_all();  // PE 0's operation is complete (quiet) before PE 1 looks
  if (world.process() == 1) {
    check_result found{0, ULLONG_MAX};
    BENCH_CUDA_CHECK(cudaMemcpy(result.get(), &found, sizeof found, cudaMemcpyHostToDevice));
    check_kernel<<<1024, 256>>>(plan, m, buffers.destination(), result.get<check_result>());
    BENCH_CUDA_CHECK(cudaGetLastError());
    BENCH_CUDA_CHECK(cudaMemcpy(&found, result.get(), sizeof found, cudaMemcpyDeviceToHost));
    if (found.wrong != 0) {
      const auto first = static_cast<std::int64_t>(found.first);
      fail_job(benchmark, std::string(method_call(m)) + " of " + case_text(plan) + ": " +
                              std::to_string(found.wrong) + " of " +
                              std::to_string(static_cast<long long>(plan.n) * plan.n) +
                              " elements of PE 1's destination matrix are wrong, the first at "
                              "row " +
                              std::to_string(first / plan.n) + ", column " +
                              std::to_string(first % plan.n) + " (expected " +
                              std::to_string(expected_value(plan, m, first)) + ")");
    }
  }
  // PE 1 may have found wrong data: it ends the job; PE 0 waits for it here.
  world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
}

struct method_figures {
  figure us;    // per operation
  figure gbps;  // bytes moved / time
};

struct case_figures {
  case_plan plan;
  method_figures of[method_count];
  method fastest;  // of the iput methods, by median time
};

// Every method's passes (collective); the figures on PE 0 (PE 1's hold the plan alone).
case_figures measure(const mpi_world& world, const symmetric_buffers& buffers,
                     const case_plan& plan, const device_bytes& repetition_ns) {
  BENCH_CUDA_CHECK(cudaMemset(buffers.ready(), 0, 2 * sizeof(std::uint64_t)));
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  nvshmem_barrier_all();  // both PEs' signals are 0 before either starts
  const timing_args args{plan,
                         buffers.source(),
                         buffers.destination(),
                         buffers.ready(),
                         buffers.answer(),
                         world.process(),
                         repetition_ns.get<unsigned long long>()};
  timing_kernel<<<1, block_threads>>>(args);
  BENCH_CUDA_CHECK(cudaGetLastError());
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  nvshmem_barrier_all();

  case_figures f{};
  f.plan = plan;
  f.fastest = method::threads;
  if (world.process() != 0) return f;
  std::vector<unsigned long long> ns(static_cast<std::size_t>(method_count) * repetitions);
  BENCH_CUDA_CHECK(
      cudaMemcpy(ns.data(), repetition_ns.get(), ns.size() * sizeof ns[0], cudaMemcpyDeviceToHost));
  const double operations = static_cast<double>(plan.operations_per_pass) * plan.passes;
  const double bytes = static_cast<double>(plan.bytes) * operations;
  for (int m = 0; m < method_count; ++m) {
    std::vector<double> us, gbps;
    for (int r = 0; r < repetitions; ++r) {
      const auto t = static_cast<double>(ns[static_cast<std::size_t>(m * repetitions + r)]);
      us.push_back(t / operations / 1000);
      gbps.push_back(bytes / t);  // bytes per ns = GB/s
    }
    f.of[m] = {summary(us), summary(gbps)};
  }
  for (const method m : iput_methods) {
    if (f.of[static_cast<int>(m)].us.median < f.of[static_cast<int>(f.fastest)].us.median) {
      f.fastest = m;
    }
  }
  return f;
}

// ---- Output -------------------------------------------------------------------------------------

table iput_table(layout kind, const std::string& unit) {
  return table{std::string("NVSHMEM strided put (iput) over NVLink, PE 0 -> PE 1, one ") +
                   std::to_string(block_threads) + "-thread block on PE 0, of " +
                   layout_detail(kind) + "; " +
                   (unit == "us" ? "time per operation" : "bandwidth") +
                   " in passes of K operations, each pass then nvshmem_quiet and "
                   "nvshmemx_signal_op to PE 1, which answers; for each N the fastest of "
                   "nvshmem_double_iput (threads), nvshmemx_double_iput_warp (warps) and "
                   "nvshmemx_double_iput_block (the block)",
               unit,
               "contiguous put",
               "nvshmemx_putmem_block of the same bytes (one contiguous run) from the start of the "
               "source matrix into the start of PE 1's destination matrix, the same block, the "
               "same passes in the same kernel, alternating with the iput repetitions",
               2,
               block_threads,
               1,
               {}};
}

// JSON number; NaN and infinity become null.
std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// JSON string literal of text without control characters (what this program writes).
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return out + "\"";
}

// <dir>/nvshmem_iput_cases.json: one line per layout and N, for typed_put_bandwidth
// ($DCUDA_NVSHMEM_IPUT_RESULT). "iput_us" and "iput_gbps" are the fastest way's, named by
// "iput"; "<way>_us" every way's; times per operation, medians of 7.
void write_cases(const options& command_line, const std::string& measured,
                 const device_info& device, const std::vector<case_figures>& cases) {
  std::ostringstream json;
  const char* commit = std::getenv("DCUDA_COMMIT");
  json << "{\n";
  json << "  \"benchmark\": " << json_string(benchmark) << ",\n";
  json << "  \"measured\": " << json_string(measured) << ",\n";
  json << "  \"device_name\": " << json_string(device.name) << ",\n";
  json << "  \"date\": " << json_string(utc_now_iso8601()) << ",\n";
  json << "  \"commit\": "
       << json_string(commit != nullptr && commit[0] != '\0' ? commit : "unknown") << ",\n";
  json << "  \"threads\": " << block_threads << ",\n";
  json << "  \"cases\": [";
  const char* separator = "\n";
  for (const case_figures& f : cases) {
    const method_figures& best = f.of[static_cast<int>(f.fastest)];
    const method_figures& contiguous = f.of[static_cast<int>(method::contiguous)];
    json << separator << "    {\"layout\": " << json_string(layout_key(f.plan.kind))
         << ", \"n\": " << f.plan.n << ", \"bytes\": " << f.plan.bytes
         << ", \"operations_per_pass\": " << f.plan.operations_per_pass
         << ", \"iput\": " << json_string(method_call(f.fastest))
         << ", \"iput_us\": " << json_number(best.us.median)
         << ", \"iput_gbps\": " << json_number(best.gbps.median)
         << ", \"contiguous_us\": " << json_number(contiguous.us.median)
         << ", \"contiguous_gbps\": " << json_number(contiguous.gbps.median)
         << ", \"iput_over_contiguous_time\": "
         << json_number(best.us.median / contiguous.us.median);
    for (const method m : iput_methods) {
      json << ", \"" << method_key(m)
           << "_us\": " << json_number(f.of[static_cast<int>(m)].us.median);
    }
    json << "}";
    separator = ",\n";
  }
  json << "\n  ]\n}\n";

  const std::filesystem::path file = std::filesystem::path(command_line.results_dir) / cases_file;
  std::error_code error;
  std::filesystem::create_directories(command_line.results_dir, error);
  std::ofstream out(file);
  out << json.str();
  out.close();
  if (error || !out) {
    std::fprintf(stderr, "FAIL: %s: cannot write %s\n", benchmark, file.string().c_str());
    std::exit(1);
  }
  std::printf("# per-case figures written to %s\n", file.string().c_str());
}

void print_methods(layout kind, const std::vector<case_figures>& cases) {
  for (const case_figures& f : cases) {
    if (f.plan.kind != kind) continue;
    std::printf("# %s: time per operation (us, median of %d):", case_text(f.plan).c_str(),
                repetitions);
    for (const method m : iput_methods) {
      std::printf(" %s %.2f,", method_call(m), f.of[static_cast<int>(m)].us.median);
    }
    std::printf(" %s %.2f; fastest: %s\n", method_call(method::contiguous),
                f.of[static_cast<int>(method::contiguous)].us.median, method_call(f.fastest));
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing here uses NVLink multicast, which must stay off on machines shared with others.
  setenv("NVSHMEM_DISABLE_NVLS", "1", /*overwrite=*/1);
  mpi_world world(&argc, &argv, benchmark);
  const options command_line = parse_options(
      argc, argv, benchmark,
      "NVSHMEM strided puts (nvshmem_double_iput, _warp, _block) of a column, a column block "
      "and the transpose of an N x N matrix of doubles between the GPUs of 2 processes, against "
      "nvshmemx_putmem_block of the same bytes (the anchor of dcuda's typed puts); run it as "
      "mpirun -np 2");
  if (skip_without_two_gpus(world, /*one_node=*/true)) return 0;

  // The GPU dcuda would give this process: its index among the processes of its node.
  BENCH_CUDA_CHECK(cudaSetDevice(world.local_index()));
  require_distinct_gpus(world);

  start_nvshmem(world, benchmark);
  int major = 0;
  int minor = 0;
  int patch = 0;
  nvshmemx_vendor_get_version_info(&major, &minor, &patch);
  const std::string measured = "NVSHMEM " + std::to_string(major) + "." + std::to_string(minor) +
                               "." + std::to_string(patch);

  {
    symmetric_buffers buffers;
    // NVSHMEM's iput has only the P2P path (loads and stores to the other GPU's mapped memory).
    const bool mapped =
        !world.any(nvshmem_ptr(buffers.destination(), 1 - world.process()) == nullptr);
    if (!skip_for(world, mapped ? ""
                                : "NVSHMEM does not map the other PE's memory (no P2P between "
                                  "the GPUs), and its iput works only over P2P")) {
      device_bytes repetition_ns(static_cast<std::size_t>(method_count) * repetitions *
                                 sizeof(unsigned long long));
      device_bytes check(sizeof(check_result));
      std::vector<case_figures> cases;
      for (const int n : sizes) {
        for (const layout kind : layouts) {
          const case_plan plan = plan_for(kind, n);
          for (int m = 0; m < method_count; ++m) {
            check_method(world, buffers, plan, static_cast<method>(m), check);
          }
          cases.push_back(measure(world, buffers, plan, repetition_ns));
        }
      }

      if (world.prints()) {
        const device_info device = current_device();
        report out(benchmark, command_line, device);
        out.set_measured_name(measured);
        for (const layout kind : layouts) {
          table time = iput_table(kind, "us");
          table bandwidth = iput_table(kind, "GB/s");
          for (const case_figures& f : cases) {
            if (f.plan.kind != kind) continue;
            const method_figures& best = f.of[static_cast<int>(f.fastest)];
            const method_figures& contiguous = f.of[static_cast<int>(method::contiguous)];
            const auto size = static_cast<std::size_t>(f.plan.bytes);
            time.rows.push_back(
                {size, best.us.median, contiguous.us.median, best.us.min, best.us.max});
            bandwidth.rows.push_back(
                {size, best.gbps.median, contiguous.gbps.median, best.gbps.min, best.gbps.max});
          }
          out.print(time);
          out.print(bandwidth);
          print_methods(kind, cases);
        }
        out.write_json();
        write_cases(command_line, measured, device, cases);
      }
    }
  }
  nvshmem_finalize();
  return 0;
}
