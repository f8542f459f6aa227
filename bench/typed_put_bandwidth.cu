// typed_put_bandwidth: what typed puts between two GPUs cost (extension, not in the thesis):
// `mpirun -np 2 typed_put_bandwidth`, one process per GPU of one node, the peer path (NVLink); with
// DCUDA_FORCE_NETWORK=1 (or processes on different nodes, or GPUs without peer access) the network
// path (host proxies and MPI), written as typed_put_bandwidth_network.json.
// Each GPU runs one rank of 1024 threads (--dcuda-ranks-per-device=1): world rank 0 (process 0)
// puts to world rank 1, the rank of process 1; the copy is made by the sending rank's 32 warps
// alone (no ranks cooperate).
//
// Every rank's window holds two N x N row-major matrices of doubles, [source][destination]
// (2 * 8 N^2 bytes; dcuda windows are int-sized, so an N whose window passes 2^31 - 1 bytes is
// skipped and said so: N = 1024 .. 8192 fit, 8192 with a 1 GiB window). The sender's source
// matrix holds the double i at element i. Three layouts, as pack_bandwidth's:
//
//   V  a column block: dcuda_type_vector(N, N/2, N, DCUDA_DOUBLE), count 1, at column N/4 of the
//      source, into the same type at column N/4 of the destination (N runs of 4N bytes)
//   T  the lower triangle: dcuda_type_indexed(N, {1, 2, .., N}, {0, N, 2N, ..}, DCUDA_DOUBLE),
//      count 1, into the same type (N runs of 8 .. 8N bytes)
//   X  the transpose: source dcuda_type_vector(N, 1, N, DCUDA_DOUBLE) resized to extent 8,
//      count N (element j is column j); target DCUDA_DOUBLE, count N^2: the destination matrix
//      receives the transpose (runs of 8 bytes on the source side)
//
// A pass is K dcuda_put_notify_typed of the layout back to back into the same destination,
// answered by one dcuda_notify once the receiver has consumed the K notifications; rank 0 times
// each repetition of passes between two barriers of both ranks (K, passes: ~64 MiB per pass,
// ~512 MiB per repetition, of packed bytes). Bandwidth is packed bytes / time (1 GB = 1e9 B),
// the median of 7 repetitions after an untimed one. Before the timing the receiver checks its
// whole destination matrix once (the typed elements hold the source's values, every other
// element is untouched): a wrong element prints FAIL and ends the job with status 1.
//
// References, same program run:
//   every layout  the contiguous dcuda_put_notify of the same number of bytes (the packed size)
//                 from the start of the source matrix into the destination, the same passes
//                 timed the same way in the same kernel, alternating with the typed repetitions
//   X             also the transpose host-staged through MPI's derived datatypes, measured after
//                 the dcuda session between the same processes: process 0 cudaMemcpy's its
//                 matrix into pinned host memory and MPI_Send's it with an MPI_Type_vector
//                 column resized to extent 8 (count N: the transpose), process 1 MPI_Recv's
//                 N^2 MPI_DOUBLE and cudaMemcpy's them to its GPU, then answers with 4 bytes;
//                 time per transpose (process 0's MPI_Wtime), median of 7 repetitions
//
// How many ranks a typed put needs: V at N = 4096 shared among 1, 2, 4, ... ranks per GPU (up to
// every resident rank; one dcuda_session per count), rank r of process 0 putting its N / ranks
// rows to rank r of process 1, beside the contiguous puts of the same shares by the same ranks;
// one table per count, then the count at which the typed put reaches 0.9 of the highest
// contiguous figure of the sweep (the link as dcuda's puts reach it). Measured where N = 4096 is.
//
// The transpose as a dcuda program does it, every rank of the GPU taking its share: X at every N
// shared among R ranks per GPU (the largest power of two that fits, at most N), rank r putting
// columns [r C, (r + 1) C) of the source (C = N / R) as rows of the destination; time per whole
// transpose against the host-staged MPI transpose. The 10 x target is this figure's; one rank's
// transpose is reported without a target.
//
// If $DCUDA_NVSHMEM_IPUT_RESULT names the per-case file of nvshmem_iput (nvshmem_iput_cases.json,
// run before, in the same device session), the V and X cases get one more table each: dcuda's
// time per typed put beside NVSHMEM's strided put (iput) of the same layout, N and Size, the
// file's fastest way of calling it (and, without --n, the target V <= NVSHMEM's time at the N of
// least margin). Unset, unreadable or without lines of the same layout, N and Size, it says so in
// one line and prints no such table.
//
// On the network path the contiguous reference takes the same path, the rank sweep and the
// NVSHMEM tables are left out (they are about the peer path), and the targets are V and T at least
// 0.85 of the contiguous put. With one GPU it prints "SKIP: typed_put_bandwidth: <why>" and exits
// with status 0.
// --n=N1,N2,... (multiples of 4) measures only those N and writes typed_put_bandwidth_partial.json
// without targets.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/matrix_layouts.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/nvshmem_iput_cases.h"
#include "common/statistics.h"
#include "dcuda/datatype.h"
#include "dcuda/device.cuh"
#include "dcuda/detail/device/clock.cuh"
#include "dcuda/detail/device/target_route.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "typed_put_bandwidth";

// Which path the two processes' ranks reach each other by, found by the session's probe.
bool network_path = false;
std::string path_text() {
  return network_path ? "the network path (host proxies and MPI)" : "the peer path (NVLink)";
}
constexpr const char* description =
    "bandwidth of dcuda_put_notify_typed between the GPUs of 2 processes over the peer path, or "
    "the network path with DCUDA_FORCE_NETWORK=1 (a "
    "column block, the lower triangle and the transpose of an N x N matrix of doubles, N = 1024 "
    ".. 8192) against a contiguous dcuda_put_notify of the packed bytes, and the transpose "
    "against host-staged MPI derived datatypes; run it as mpirun -np 2; --n=N1,N2,... measures "
    "only those N (multiples of 4) and writes typed_put_bandwidth_partial.json without targets";
constexpr int threads_per_rank = 1024;
constexpr int data_tag = 0;
constexpr int answer_tag = 1;
constexpr double untouched = -1.0;  // what the destination matrix holds before the check's put

// ---- The command line ---------------------------------------------------------------------------

struct selection {
  std::vector<int> sizes{1024, 2048, 4096, 8192};
  bool partial = false;  // --n given: no targets, a JSON of its own
};

// Takes --n=N1,N2,... out of the arguments meant for dcuda.
selection select_cases(options& command_line) {
  selection chosen;
  const std::string prefix = "--n=";
  std::vector<std::string> rest;
  for (const std::string& argument : command_line.dcuda_arguments) {
    if (argument.rfind(prefix, 0) != 0) {
      rest.push_back(argument);
      continue;
    }
    const std::string list = argument.substr(prefix.size());
    chosen.sizes.clear();
    std::size_t at = 0;
    while (at <= list.size()) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      const std::string item = list.substr(at, comma - at);
      char* end = nullptr;
      const long n = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || n < 4 || n > 65536 || n % 4 != 0) {
        std::fprintf(stderr, "%s: --n: '%s' is not a multiple of 4 of 4..65536\n", benchmark,
                     item.c_str());
        std::exit(2);
      }
      chosen.sizes.push_back(static_cast<int>(n));
      at = comma + 1;
    }
    chosen.partial = true;
  }
  command_line.dcuda_arguments = rest;
  return chosen;
}

// Bytes of one rank's window at n: two n x n matrices of doubles.
std::uint64_t window_bytes_for(int n) {
  return 2 * static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(n) * sizeof(double);
}
bool window_fits(int n) {
  return window_bytes_for(n) <= static_cast<std::uint64_t>(INT_MAX);
}

// ---- The layouts --------------------------------------------------------------------------------

const char* kind_detail(layout_kind kind) {
  switch (kind) {
    case layout_kind::column_block:
      return "V, a column block of an N x N row-major matrix of doubles, "
             "dcuda_type_vector(N, N/2, N, DCUDA_DOUBLE) count 1 at column N/4 -> the same type "
             "at the target; one row per N, Size = packed bytes = 4 N^2";
    case layout_kind::lower_triangle:
      return "T, the lower triangle of an N x N row-major matrix of doubles, "
             "dcuda_type_indexed(N, {1, 2, .., N}, {0, N, 2N, ..}, DCUDA_DOUBLE) count 1 -> the "
             "same type at the target; one row per N, Size = packed bytes = 4 N (N + 1)";
    case layout_kind::transpose:
      return "X, the transpose of an N x N row-major matrix of doubles, "
             "dcuda_type_vector(N, 1, N, DCUDA_DOUBLE) resized to extent 8, count N -> "
             "DCUDA_DOUBLE count N^2 at the target; one row per N, Size = packed bytes = 8 N^2";
  }
  return "?";
}

// What one case puts: the handles and counts of both sides (committed before the run), where
// element 0 starts in each matrix, and how the passes are made.
struct case_plan {
  layout_kind kind;
  int n;
  dcuda_datatype source_type;
  int source_count;
  dcuda_datatype target_type;
  int target_count;
  int origin_bytes;  // element 0's origin in the source matrix and in the destination matrix
  int packed_bytes;  // bytes one typed put moves (also the contiguous put's size)
  int puts_per_pass;
  int passes;  // per repetition
  int warmup_passes;
};

// The value the receiver's destination matrix holds at (row, column) after the typed put (the
// sender's source matrix holds the double i at element i).
__host__ __device__ inline double expected_value(layout_kind kind, int n, int row, int column) {
  const std::int64_t width = n;
  switch (kind) {
    case layout_kind::column_block:
      return column >= n / 4 && column < n / 4 + n / 2 ? static_cast<double>(row * width + column)
                                                       : untouched;
    case layout_kind::lower_triangle:
      return column <= row ? static_cast<double>(row * width + column) : untouched;
    case layout_kind::transpose:
      return static_cast<double>(column * width + row);
  }
  return untouched;
}

// The types of one case, built and committed on the host; free() releases them.
struct built_case {
  case_plan plan;
  dcuda_datatype owned[2] = {DCUDA_DATATYPE_NULL, DCUDA_DATATYPE_NULL};

  void free() {
    for (dcuda_datatype& type : owned) {
      if (type.id != DCUDA_DATATYPE_NULL.id) dcuda_type_free(&type);
    }
  }
};

built_case build_case(layout_kind kind, int n) {
  const std::uint64_t size = static_cast<std::uint64_t>(n);
  built_case c{};
  case_plan& plan = c.plan;
  plan.kind = kind;
  plan.n = n;
  plan.source_count = 1;
  plan.target_count = 1;
  std::uint64_t packed = 0;
  switch (kind) {
    case layout_kind::column_block:
      dcuda_type_vector(n, n / 2, n, DCUDA_DOUBLE, &c.owned[0]);
      plan.source_type = plan.target_type = c.owned[0];
      plan.origin_bytes = static_cast<int>(size / 4 * sizeof(double));
      packed = size * (size / 2) * sizeof(double);
      break;
    case layout_kind::lower_triangle: {
      std::vector<int> lengths, displacements;
      for (int row = 0; row < n; ++row) {
        lengths.push_back(row + 1);
        displacements.push_back(row * n);
      }
      dcuda_type_indexed(n, lengths.data(), displacements.data(), DCUDA_DOUBLE, &c.owned[0]);
      plan.source_type = plan.target_type = c.owned[0];
      packed = size * (size + 1) / 2 * sizeof(double);
      break;
    }
    case layout_kind::transpose: {
      dcuda_datatype column = DCUDA_DATATYPE_NULL;
      dcuda_type_vector(n, 1, n, DCUDA_DOUBLE, &column);
      dcuda_type_resized(column, 0, sizeof(double), &c.owned[0]);
      dcuda_type_free(&column);  // the resized type stays valid
      plan.source_type = c.owned[0];
      plan.source_count = n;
      plan.target_type = DCUDA_DOUBLE;
      plan.target_count = n * n;
      packed = size * size * sizeof(double);
      break;
    }
  }
  dcuda_type_commit(&c.owned[0]);
  plan.packed_bytes = static_cast<int>(packed);
  // ~64 MiB per pass (1..64 puts), ~512 MiB per repetition (1..64 passes).
  plan.puts_per_pass = static_cast<int>(std::clamp<std::uint64_t>(64 * MiB / packed, 1, 64));
  plan.passes = static_cast<int>(std::clamp<std::uint64_t>(
      512 * MiB / (packed * static_cast<std::uint64_t>(plan.puts_per_pass)), 1, 64));
  plan.warmup_passes = std::max(1, plan.passes / 4);
  return c;
}

// A case at n shared among `ranks` ranks per GPU, the same passes as the whole case (so that every
// row of a sweep moves the same bytes). V: each rank puts n / ranks rows of the column block. X:
// each rank puts C = n / ranks columns of the source as rows of the destination (count C of the
// resized column type into C n doubles).
built_case build_spread_case(layout_kind kind, int n, int ranks) {
  built_case c = build_case(kind, n);
  case_plan& plan = c.plan;
  const int share = n / ranks;
  if (kind == layout_kind::transpose) {
    plan.source_count = share;
    plan.target_count = share * n;
    plan.packed_bytes = share * n * static_cast<int>(sizeof(double));
    return c;
  }
  c.free();
  dcuda_type_vector(share, n / 2, n, DCUDA_DOUBLE, &c.owned[0]);
  dcuda_type_commit(&c.owned[0]);
  plan.source_type = plan.target_type = c.owned[0];
  plan.packed_bytes = share * (n / 2) * static_cast<int>(sizeof(double));
  return c;
}

// Where share `share` of a spread of `ranks` starts, in bytes from each matrix's start: V's rows
// on both sides; X's columns in the source and rows in the destination.
struct share_offsets {
  int source;
  int target;
};
__host__ __device__ inline share_offsets offsets_of_share(layout_kind kind, int n, int ranks,
                                                          int share) {
  const int part = n / ranks;
  const int rows = part * n * static_cast<int>(sizeof(double));
  if (kind == layout_kind::transpose) {
    return {share * part * static_cast<int>(sizeof(double)), share * rows};
  }
  return {share * rows, share * rows};
}

// ---- The dcuda kernel ---------------------------------------------------------------------------

// What one dcuda_host_run does, and its results (each process passes its own).
struct typed_run {
  bool probe;  // only find the path between the processes (peer_path)
  case_plan plan;
  // The spread: rank r < spread_ranks of process 0 puts share r of the case (offsets_of_share;
  // plan's types are those of one share) to rank r of process 1. 0: world rank 0 puts the whole
  // case alone.
  int spread_ranks;
  int first_remote;       // world rank of process 1's first rank
  unsigned char* window;  // device rank 0's window: [source matrix][destination matrix]
  int window_bytes;
  unsigned long long typed_ns[repetitions];       // written by world rank 0
  unsigned long long contiguous_ns[repetitions];  // written by world rank 0
  int mismatches;   // wrong elements of the receiver's destination matrix
  int first_wrong;  // the lowest of them, row * n + column (INT_MAX: none)
  int peer_path;    // probe: 1 when this process reaches the other one by the peer path
};

struct role {
  bool sends;             // world rank 0
  bool receives;          // world rank first_remote
  int target;             // of the sender
  int origin;             // of the receiver
  share_offsets offsets;  // of its share, in both matrices (0 outside a spread)
};

// One put of the case (typed, or contiguous of the packed bytes) into the target's destination
// matrix.
__device__ inline void put_once(dcuda_state& gst, const case_plan& plan, dcuda_win win,
                                const role& who, unsigned char* window, bool typed) {
  const int destination = plan.n * plan.n * static_cast<int>(sizeof(double)) + who.offsets.target;
  unsigned char* const source = window + who.offsets.source;
  if (typed) {
    dcuda_put_notify_typed(gst, win, who.target, destination + plan.origin_bytes, plan.target_count,
                           plan.target_type, source + plan.origin_bytes, plan.source_count,
                           plan.source_type, data_tag);
  } else {
    dcuda_put_notify(gst, win, who.target, destination, plan.packed_bytes, source, data_tag);
  }
}

// `passes` passes of K puts, each pass answered by one notification.
__device__ inline void run_passes(dcuda_state& gst, const case_plan& plan, dcuda_win win,
                                  const role& who, unsigned char* window, bool typed, int passes) {
  for (int pass = 0; pass < passes; ++pass) {
    if (who.sends) {
      for (int i = 0; i < plan.puts_per_pass; ++i) {
        put_once(gst, plan, win, who, window, typed);
      }
    }
    if (who.receives) {
      dcuda_wait_notifications(gst, data_tag, plan.puts_per_pass);
      dcuda_notify(gst, who.origin, DCUDA_COMM_WORLD, answer_tag);
    }
    if (who.sends) dcuda_wait_notifications(gst, answer_tag, 1);
  }
}

// All threads of the receiver: counts the wrong elements of the destination matrix.
__device__ inline void check_destination(const case_plan& plan, const double* destination,
                                         typed_run* run) {
  const std::int64_t elements = static_cast<std::int64_t>(plan.n) * plan.n;
  int wrong = 0;
  int first = INT_MAX;
  for (std::int64_t i = threadIdx.x; i < elements; i += blockDim.x) {
    const int row = static_cast<int>(i / plan.n);
    const int column = static_cast<int>(i % plan.n);
    if (destination[i] != expected_value(plan.kind, plan.n, row, column)) {
      if (wrong == 0) first = static_cast<int>(i);
      ++wrong;
    }
  }
  if (wrong != 0) {
    atomicAdd(&run->mismatches, wrong);
    atomicMin(&run->first_wrong, first);
  }
  __syncthreads();
}

__global__ void __launch_bounds__(threads_per_rank) typed_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  typed_run* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int world_rank = 0;
  int device_rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &world_rank);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  const bool first_process = world_rank == device_rank;  // process 0 owns [0, n0)
  const int first_remote = run->first_remote;

  if (run->probe) {
    // The route dcuda_put_typed would take to the other process's first rank (both processes
    // decide the peer path together, so both see the same answer).
    if (device_rank == 0 && threadIdx.x == 0) {
      const int other = first_process ? first_remote : 0;
      run->peer_path =
          dcuda::device::route_to(gst, other).path == dcuda::protocol::route::peer ? 1 : 0;
    }
  } else {
    const case_plan plan = run->plan;
    const int spread = run->spread_ranks;
    // In a spread every rank of a share sends or receives it; the matrices are the same memory
    // in every window of a process, and a share's rows are its own on both sides.
    const int share = spread == 0 ? 0 : device_rank;
    const bool in_spread = spread != 0 && device_rank < spread;
    const role who =
        spread == 0
            ? role{world_rank == 0, world_rank == first_remote, first_remote, 0, {0, 0}}
            : role{in_spread && first_process, in_spread && !first_process, first_remote + share,
                   share, offsets_of_share(plan.kind, plan.n, spread, share)};
    unsigned char* window = device_rank == 0 || in_spread ? run->window : nullptr;
    dcuda_win win;
    dcuda_win_create(gst, DCUDA_COMM_WORLD, window, window != nullptr ? run->window_bytes : 0,
                     &win);

    // The check: one typed put into the untouched destination, which the receiver reads whole.
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
    if (who.sends) put_once(gst, plan, win, who, window, true);
    if (who.receives) dcuda_wait_notifications(gst, data_tag, 1);
    if (spread != 0) dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // every share has landed
    if (world_rank == first_remote) {
      check_destination(
          plan,
          reinterpret_cast<const double*>(run->window) + static_cast<std::int64_t>(plan.n) * plan.n,
          run);
    }

    // Typed and contiguous repetitions alternate; the first of each is the warm-up.
    for (int repetition = -1; repetition < repetitions; ++repetition) {
      const int passes = repetition < 0 ? plan.warmup_passes : plan.passes;
      for (int variant = 0; variant < 2; ++variant) {
        const bool typed = variant == 0;
        dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // the sender starts now
        const std::uint64_t start = dcuda::device::global_time_ns();
        run_passes(gst, plan, win, who, window, typed, passes);
        dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // the receiver has consumed every put
        if (world_rank == 0 && threadIdx.x == 0 && repetition >= 0) {
          const unsigned long long ns = dcuda::device::global_time_ns() - start;
          (typed ? run->typed_ns : run->contiguous_ns)[repetition] = ns;
        }
      }
    }
    dcuda_win_free(gst, win);
  }
  dcuda_gpu_finish(gst);
}

// Element i of each matrix of the window: the double i (source), `untouched` (destination).
__global__ void prepare_window(double* window, std::int64_t elements) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < elements; i += step) {
    window[i] = static_cast<double>(i);
    window[elements + i] = untouched;
  }
}

void prepare(const device_bytes& window, int n) {
  prepare_window<<<1024, 256>>>(window.get<double>(), static_cast<std::int64_t>(n) * n);
  check_cuda(cudaGetLastError(), "prepare_window<<<>>>", __FILE__, __LINE__);
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());  // dcuda's stream does not wait for the default one
}

// ---- dcuda's figures ----------------------------------------------------------------------------

struct case_figures {
  int n = 0;
  std::size_t packed_bytes = 0;
  figure typed_gbps;
  figure contiguous_gbps;
  figure typed_us;  // per put
};

struct dcuda_figures {
  int ranks = 0;
  std::vector<case_figures> cases[kind_count];  // [kind], one per measured N
};

case_figures figures_of(const typed_run& run) {
  const case_plan& plan = run.plan;
  const double puts = static_cast<double>(plan.puts_per_pass) * plan.passes;
  const double bytes = static_cast<double>(plan.packed_bytes) * puts;
  std::vector<double> typed, contiguous, per_put_us;
  for (int r = 0; r < repetitions; ++r) {
    typed.push_back(bytes / static_cast<double>(run.typed_ns[r]));  // bytes per ns = GB/s
    contiguous.push_back(bytes / static_cast<double>(run.contiguous_ns[r]));
    per_put_us.push_back(static_cast<double>(run.typed_ns[r]) / puts / 1000);
  }
  case_figures f;
  f.n = plan.n;
  f.packed_bytes = static_cast<std::size_t>(plan.packed_bytes);
  f.typed_gbps = summary(typed);
  f.contiguous_gbps = summary(contiguous);
  f.typed_us = summary(per_put_us);
  return f;
}

// One row of the spread: `ranks` ranks per GPU, GB/s of all of them together.
struct spread_figures {
  int ranks = 0;
  std::size_t packed_bytes = 0;  // of all shares of one put
  figure typed_gbps;
  figure contiguous_gbps;
  figure typed_us;  // per put of every share (the shares go at once)
};

spread_figures spread_figures_of(const typed_run& run) {
  const case_figures one = figures_of(run);  // one share's bytes per ns
  const double ranks = run.spread_ranks;
  const auto scaled = [&](figure f) {
    f.median *= ranks;
    f.min *= ranks;
    f.max *= ranks;
    return f;
  };
  return {run.spread_ranks, one.packed_bytes * static_cast<std::size_t>(run.spread_ranks),
          scaled(one.typed_gbps), scaled(one.contiguous_gbps), one.typed_us};
}

std::string case_text(const case_plan& plan) {
  return std::string(kind_name(plan.kind)) + ", N = " + std::to_string(plan.n);
}

// One dcuda session over both processes: the probe, then every layout at every N that fits. No
// MPI while the session lives.
std::optional<dcuda_figures> measure_dcuda(const mpi_world& world, const options& command_line,
                                           const std::vector<int>& sizes, bool partial,
                                           std::optional<report>& out,
                                           std::optional<device_bytes>& window) {
  dcuda_figures figures;
  std::vector<std::string> failures;  // this process's receiver's findings
  {
    dcuda_session session(command_line, typed_kernel, threads_per_rank,
                          {"--dcuda-ranks-per-device=1"});
    const dcuda_rank_info& info = session.rank_info();
    const int n0 = world.process() == 0 ? info.rank_responsible : info.rank_start;
    if (info.process_count != 2 || info.process_index != world.process() ||
        info.rank_start != (world.process() == 0 ? 0 : n0) || n0 < 1 || info.rank_count - n0 < 1) {
      fail_job(benchmark, "dcuda reports " + describe_rank_info(info) + " to MPI process " +
                              std::to_string(world.process()) +
                              "; expected 2 processes, numbered as in MPI_COMM_WORLD (the "
                              "multi-process runtime)");
    }
    figures.ranks = info.rank_count;
    std::uint64_t largest_window = 0;
    for (const int n : sizes) largest_window = std::max(largest_window, window_bytes_for(n));
    window.emplace(static_cast<std::size_t>(largest_window));

    typed_run probe{};
    probe.probe = true;
    probe.first_remote = n0;
    session.run(probe);
    // Both processes decide the path together; any() keeps them in step all the same.
    network_path = world.any(probe.peer_path == 0);
    {
      if (world.prints() && !out) {
        const std::string name = std::string(benchmark) + (network_path ? "_network" : "");
        out.emplace(partial ? name + "_partial" : name, command_line, current_device());
      }
      for (const int n : sizes) {
        for (const layout_kind kind : kinds) {
          built_case c = build_case(kind, n);
          typed_run run{};
          run.plan = c.plan;
          run.first_remote = n0;
          run.window = window->get();
          run.window_bytes = static_cast<int>(window_bytes_for(n));
          run.first_wrong = INT_MAX;
          prepare(*window, n);
          session.run(run);
          c.free();
          if (run.mismatches != 0) {
            failures.push_back(
                "dcuda_put_notify_typed of " + case_text(run.plan) + ": " +
                std::to_string(run.mismatches) + " of " +
                std::to_string(static_cast<long long>(n) * n) +
                " elements of the destination matrix are wrong, the first at row " +
                std::to_string(run.first_wrong / n) + ", column " +
                std::to_string(run.first_wrong % n) + " (expected " +
                std::to_string(expected_value(kind, n, run.first_wrong / n, run.first_wrong % n)) +
                ")");
          }
          figures.cases[static_cast<int>(kind)].push_back(figures_of(run));
        }
      }
    }
  }
  if (!failures.empty()) fail_job(benchmark, failures.front());
  // The other process may have found wrong bytes: it ends the job; this one waits for it here.
  world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
  return figures;
}

// ---- How many ranks a typed put needs --------------------------------------------------------

// The N of the sweep: V at this N is shared among 1, 2, 4, ... ranks per GPU.
constexpr int spread_n = 4096;

// Every rank a GPU holds at threads_per_rank (one dcuda_session asks), as process 0 finds it.
int resident_ranks(const mpi_world& world, const options& command_line) {
  int resident = 0;
  {
    dcuda_session session(command_line, typed_kernel, threads_per_rank);
    resident = session.rank_info().rank_responsible;
  }
  return static_cast<int>(world.from_process0(resident));
}

// `kind` at n put by each count of `counts` ranks per GPU together (rank r of process 0 to rank r
// of process 1, its own share): one dcuda_session per count. Each count's destination is checked
// whole once, as the cases' are.
std::vector<spread_figures> measure_spread(const mpi_world& world, const options& command_line,
                                           const device_bytes& window, layout_kind kind, int n,
                                           const std::vector<int>& counts) {
  std::vector<spread_figures> rows;
  std::vector<std::string> failures;
  for (const int ranks : counts) {
    dcuda_session session(command_line, typed_kernel, threads_per_rank,
                          {"--dcuda-ranks-per-device=" + std::to_string(ranks)});
    const dcuda_rank_info& info = session.rank_info();
    built_case c = build_spread_case(kind, n, ranks);
    typed_run run{};
    run.plan = c.plan;
    run.spread_ranks = ranks;
    run.first_remote = world.process() == 0 ? info.rank_responsible : info.rank_start;
    run.window = window.get();
    run.window_bytes = static_cast<int>(window_bytes_for(n));
    run.first_wrong = INT_MAX;
    prepare(window, n);
    session.run(run);
    c.free();
    if (run.mismatches != 0) {
      failures.push_back(
          std::string(kind_name(kind)) + " at N = " + std::to_string(n) + " shared among " +
          std::to_string(ranks) + " ranks per GPU: " + std::to_string(run.mismatches) +
          " elements of the destination matrix are wrong, the first at row " +
          std::to_string(run.first_wrong / n) + ", column " + std::to_string(run.first_wrong % n));
    }
    rows.push_back(spread_figures_of(run));
  }
  if (!failures.empty()) fail_job(benchmark, failures.front());
  world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
  return rows;
}

// One table per rank count, and the count at which the typed put reaches 0.9 of the highest
// contiguous figure of the sweep (the link as dcuda's puts reach it).
void print_spread(report& out, const std::vector<spread_figures>& rows) {
  double link = 0;
  int link_ranks = 0;
  for (const spread_figures& f : rows) {
    if (f.contiguous_gbps.median > link) {
      link = f.contiguous_gbps.median;
      link_ranks = f.ranks;
    }
  }
  const spread_figures* enough = nullptr;
  for (const spread_figures& f : rows) {
    table results{"dcuda_put_notify_typed over " + path_text() + " of V at N = " +
                      std::to_string(spread_n) + " shared among " + std::to_string(f.ranks) +
                      " ranks per GPU: rank r of process 0 puts rows [r R, (r + 1) R) of the "
                      "column block (R = N / ranks, dcuda_type_vector(R, N/2, N, DCUDA_DOUBLE)) "
                      "to rank r of process 1; GB/s of all ranks together, Size = packed bytes of "
                      "all shares of one put",
                  "GB/s",
                  "contiguous put",
                  "dcuda_put_notify of each share's packed bytes (one contiguous run) by the same "
                  "ranks to the same targets, the same passes in the same kernel, alternating "
                  "with the typed repetitions",
                  2 * f.ranks,
                  threads_per_rank,
                  0,
                  {{f.packed_bytes, f.typed_gbps.median, f.contiguous_gbps.median, f.typed_gbps.min,
                    f.typed_gbps.max}}};
    out.print(results);
    if (enough == nullptr && f.typed_gbps.median >= 0.9 * link) enough = &f;
  }
  if (enough != nullptr) {
    std::printf(
        "# ranks per GPU the typed put of V needs to reach 0.9 of the link as dcuda's contiguous "
        "puts reach it (%.1f GB/s, with %d ranks per GPU): %d (%.1f GB/s)\n\n",
        link, link_ranks, enough->ranks, enough->typed_gbps.median);
  } else {
    std::printf(
        "# the typed put of V reaches 0.9 of the link as dcuda's contiguous puts reach it (%.1f "
        "GB/s, with %d ranks per GPU) with no rank count measured\n\n",
        link, link_ranks);
  }
}

// ---- The host-staged MPI transpose --------------------------------------------------------------

// Time per transpose (us, process 0's, on both processes) of the source matrix of `window`
// (prepared at n): device -> host, MPI_Send of the transpose type (process 0), MPI_Recv
// contiguous, host -> device into the destination matrix (process 1), a 4-byte answer.
double mpi_staged_transpose_us(const mpi_world& world, int n, const device_bytes& window) {
  const std::size_t elements = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const std::size_t bytes = elements * sizeof(double);
  const bool sender = world.process() == 0;
  pinned_bytes host(bytes);
  MPI_Datatype column = MPI_DATATYPE_NULL;
  MPI_Datatype transpose = MPI_DATATYPE_NULL;
  world.check(MPI_Type_vector(n, 1, n, MPI_DOUBLE, &column), "MPI_Type_vector");
  world.check(MPI_Type_create_resized(column, 0, sizeof(double), &transpose),
              "MPI_Type_create_resized");
  world.check(MPI_Type_commit(&transpose), "MPI_Type_commit");
  world.check(MPI_Type_free(&column), "MPI_Type_free");
  double* const source = window.get<double>();
  double* const destination = source + elements;
  int answer = 0;
  const auto transpose_once = [&] {
    if (sender) {
      BENCH_CUDA_CHECK(cudaMemcpy(host.get(), source, bytes, cudaMemcpyDeviceToHost));
      world.check(MPI_Send(host.get(), n, transpose, 1, 3, world.comm()), "MPI_Send");
      world.check(MPI_Recv(&answer, 1, MPI_INT, 1, 4, world.comm(), MPI_STATUS_IGNORE), "MPI_Recv");
    } else {
      world.check(MPI_Recv(host.get(), static_cast<int>(elements), MPI_DOUBLE, 0, 3, world.comm(),
                           MPI_STATUS_IGNORE),
                  "MPI_Recv");
      BENCH_CUDA_CHECK(cudaMemcpy(destination, host.get(), bytes, cudaMemcpyHostToDevice));
      world.check(MPI_Send(&answer, 1, MPI_INT, 0, 4, world.comm()), "MPI_Send");
    }
  };

  transpose_once();  // warm-up, and the check
  long long wrong = 0;
  if (!sender) {
    for (std::size_t i = 0; i < elements; ++i) {
      const double expected = expected_value(layout_kind::transpose, n, static_cast<int>(i / n),
                                             static_cast<int>(i % n));
      if (host.get<double>()[i] != expected) ++wrong;
    }
  }
  wrong = world.sum(wrong);
  if (wrong != 0) {
    fail_job(benchmark, "MPI reference (host-staged transpose, N = " + std::to_string(n) +
                            "): " + std::to_string(wrong) + " elements received wrong");
  }

  // ~256 MiB per repetition, 1..32 transposes.
  const int transposes = static_cast<int>(std::clamp<std::size_t>(256 * MiB / bytes, 1, 32));
  std::vector<double> per_transpose_us;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
    const double start = MPI_Wtime();
    for (int i = 0; i < transposes; ++i) transpose_once();
    per_transpose_us.push_back((MPI_Wtime() - start) / transposes * 1e6);
  }
  world.check(MPI_Type_free(&transpose), "MPI_Type_free");
  return world.from_process0(median(per_transpose_us));
}

table bandwidth_table(layout_kind kind, int ranks) {
  return table{"dcuda_put_notify_typed over " + path_text() +
                   ", world rank 0 on GPU 0 -> world rank 1 on GPU 1, of " + kind_detail(kind),
               "GB/s",
               "contiguous put",
               "dcuda_put_notify of the packed bytes (one contiguous run) from the same rank to "
               "the same target, the same passes in the same kernel, alternating with the typed "
               "repetitions",
               ranks,
               threads_per_rank,
               0,
               {}};
}

// NVSHMEM's strided put where a run of nvshmem_iput left its per-case file
// ($DCUDA_NVSHMEM_IPUT_RESULT): for V and X, dcuda's time per typed put beside the file's
// fastest iput of the same layout, N and Size. Returns V's target, at the N of least margin,
// where V has rows.
std::optional<target> print_against_iput(report& out, const dcuda_figures& figures) {
  const char* variable = "DCUDA_NVSHMEM_IPUT_RESULT";
  const char* file = std::getenv(variable);
  if (file == nullptr || file[0] == '\0') {
    std::printf(
        "# %s is not set: no NVSHMEM iput tables (it names the nvshmem_iput_cases.json of a run "
        "of nvshmem_iput)\n\n",
        variable);
    return std::nullopt;
  }
  const std::optional<iput_cases> cases = read_iput_cases(file);
  if (!cases) {
    std::printf("# %s=%s cannot be read: no NVSHMEM iput tables\n\n", variable, file);
    return std::nullopt;
  }
  if (cases->cases.empty()) {
    std::printf(
        "# %s=%s holds no lines of layout and N (not nvshmem_iput's per-case file?): no "
        "NVSHMEM iput tables\n\n",
        variable, file);
    return std::nullopt;
  }
  std::optional<target> v_target;
  for (const layout_kind kind : {layout_kind::column_block, layout_kind::transpose}) {
    const char* key = kind == layout_kind::column_block ? "column_block" : "transpose";
    std::vector<typed_put_time> times;
    for (const case_figures& f : figures.cases[static_cast<int>(kind)]) {
      times.push_back({f.n, f.packed_bytes, f.typed_us.median, f.typed_us.min, f.typed_us.max});
    }
    const iput_match match = match_iput_cases(*cases, key, times);
    for (const std::string& note : match.notes) {
      std::printf("# %s=%s: %s, %s\n", variable, file, kind_name(kind), note.c_str());
    }
    if (match.rows.empty()) {
      std::printf(
          "# %s=%s holds no NVSHMEM iput figure of %s at an N and Size measured here; no "
          "NVSHMEM iput table\n\n",
          variable, file, kind_name(kind));
      continue;
    }
    std::string ways;
    for (std::size_t i = 0; i < match.rows.size(); ++i) {
      ways += (i == 0 ? "N = " : ", N = ") + std::to_string(match.n[i]) + " " + match.ways[i];
    }
    table against{std::string("time per operation: dcuda_put_notify_typed over the peer path "
                              "(NVLink), world rank 0 on GPU 0 -> world rank 1 on GPU 1, of ") +
                      kind_detail(kind) +
                      "; the time of one put in its passes, beside NVSHMEM's strided put (iput)",
                  "us",
                  "NVSHMEM iput",
                  "nvshmem_iput" + (cases->measured.empty() ? "" : " (" + cases->measured + ")") +
                      ": iputs of the same layout, N and bytes from one " +
                      std::to_string(threads_per_rank) +
                      "-thread block on PE 0, the same K and passes, one signal per pass after "
                      "nvshmem_quiet (dcuda: a notification per put); time per operation of the "
                      "fastest way (" +
                      ways + ") (" + file + ")",
                  figures.ranks,
                  threads_per_rank,
                  1,
                  match.rows};
    out.print(against);
    if (kind != layout_kind::column_block) continue;
    std::size_t least = 0;  // the row of the highest dcuda / NVSHMEM time
    for (std::size_t i = 1; i < match.rows.size(); ++i) {
      const row& r = match.rows[i];
      const row& worst = match.rows[least];
      if (r.dcuda / r.reference > worst.dcuda / worst.reference) least = i;
    }
    v_target = target{
        "V (column block): dcuda typed put time per put <= NVSHMEM iput time per "
        "operation (nvshmem_iput's fastest way), peer path, at the N of least "
        "margin, N = " +
            std::to_string(match.n[least]),
        "us", match.rows[least].dcuda, match.rows[least].reference, true};
  }
  return v_target;
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  options command_line = parse_options(argc, argv, benchmark, description);
  const selection chosen = select_cases(command_line);
  if (skip_without_two_gpus(world, /*one_node=*/true)) return 0;

  std::vector<int> sizes;  // the N that fit a window
  for (const int n : chosen.sizes) {
    if (window_fits(n)) {
      sizes.push_back(n);
    } else if (world.prints()) {
      std::printf(
          "# N = %d skipped: a window of two N x N matrices of doubles is %llu bytes, "
          "more than dcuda's int window size (%d)\n",
          n, static_cast<unsigned long long>(window_bytes_for(n)), INT_MAX);
    }
  }
  if (sizes.empty()) {
    skip_for(world, "no N of --n fits a window");
    return 0;
  }

  std::optional<report> out;  // process 0 only
  // The windows' memory, allocated once dcuda_host_init has made the chosen GPU current (it stays
  // current after dcuda_host_finish, for the MPI reference).
  std::optional<device_bytes> window;
  const std::optional<dcuda_figures> dcuda =
      measure_dcuda(world, command_line, sizes, chosen.partial, out, window);
  if (!dcuda) return 0;
  std::vector<spread_figures> spread;
  // The transpose as a whole GPU does it: every N shared among the most ranks (a power of two)
  // a GPU holds, each rank transposing its N / ranks columns.
  std::vector<spread_figures> transposes_all_ranks;
  if (!network_path) {
    const int resident = resident_ranks(world, command_line);
    if (std::find(sizes.begin(), sizes.end(), spread_n) != sizes.end()) {
      std::vector<int> counts;
      for (int ranks = 1; ranks <= resident && ranks <= spread_n; ranks *= 2)
        counts.push_back(ranks);
      spread =
          measure_spread(world, command_line, *window, layout_kind::column_block, spread_n, counts);
    }
    for (const int n : sizes) {
      int ranks = 1;
      while (ranks * 2 <= resident && ranks * 2 <= n) ranks *= 2;
      transposes_all_ranks.push_back(
          measure_spread(world, command_line, *window, layout_kind::transpose, n, {ranks})[0]);
    }
  }
  require_distinct_gpus(world);

  // The host-staged MPI transpose of every N, after the dcuda session.
  std::vector<double> mpi_us;
  for (const int n : sizes) {
    prepare(*window, n);
    mpi_us.push_back(mpi_staged_transpose_us(world, n, *window));
  }

  if (!world.prints()) return 0;
  double lowest[kind_count];  // typed / contiguous, lowest over N
  for (const layout_kind kind : kinds) {
    const int k = static_cast<int>(kind);
    table results = bandwidth_table(kind, dcuda->ranks);
    lowest[k] = std::numeric_limits<double>::infinity();
    for (const case_figures& f : dcuda->cases[k]) {
      results.rows.push_back({f.packed_bytes, f.typed_gbps.median, f.contiguous_gbps.median,
                              f.typed_gbps.min, f.typed_gbps.max});
      lowest[k] = std::min(lowest[k], f.typed_gbps.median / f.contiguous_gbps.median);
    }
    out->print(results);
  }
  table staged{"time per transpose: dcuda_put_notify_typed over " + path_text() +
                   ", world rank 0 on GPU 0 -> world rank 1 on GPU 1, of " +
                   kind_detail(layout_kind::transpose) + "; the time of one put in its passes",
               "us",
               "MPI staged",
               "host-staged MPI derived datatypes between the same 2 processes: cudaMemcpy "
               "device -> pinned host, MPI_Send of an MPI_Type_vector(N, 1, N, MPI_DOUBLE) "
               "column resized to extent 8, count N (process 0); MPI_Recv of N^2 MPI_DOUBLE, "
               "cudaMemcpy host -> device (process 1); a 4-byte answer",
               dcuda->ranks,
               threads_per_rank,
               0,
               {}};
  double lowest_speedup = std::numeric_limits<double>::infinity();
  const std::vector<case_figures>& transposes =
      dcuda->cases[static_cast<int>(layout_kind::transpose)];
  for (std::size_t i = 0; i < transposes.size(); ++i) {
    const case_figures& f = transposes[i];
    staged.rows.push_back(
        {f.packed_bytes, f.typed_us.median, mpi_us[i], f.typed_us.min, f.typed_us.max});
    lowest_speedup = std::min(lowest_speedup, mpi_us[i] / f.typed_us.median);
  }
  out->print(staged);
  double lowest_speedup_all_ranks = std::numeric_limits<double>::infinity();
  if (!transposes_all_ranks.empty()) {
    table all{"time per transpose: dcuda_put_notify_typed over " + path_text() +
                  ", every rank of GPU 0 -> the same rank of GPU 1 (R ranks per GPU, rank r "
                  "putting columns [r C, (r + 1) C) of the source, C = N / R, as rows of the "
                  "destination: count C of the resized column type into C N doubles), of " +
                  kind_detail(layout_kind::transpose) + "; the time of one transpose (all shares)",
              "us",
              "MPI staged",
              "host-staged MPI derived datatypes between the same 2 processes, as in the table "
              "above",
              2 * transposes_all_ranks.front().ranks,
              threads_per_rank,
              0,
              {}};
    for (std::size_t i = 0; i < transposes_all_ranks.size(); ++i) {
      const spread_figures& f = transposes_all_ranks[i];
      all.rows.push_back(
          {f.packed_bytes, f.typed_us.median, mpi_us[i], f.typed_us.min, f.typed_us.max});
      lowest_speedup_all_ranks = std::min(lowest_speedup_all_ranks, mpi_us[i] / f.typed_us.median);
    }
    out->print(all);
  }
  const std::optional<target> iput_target =
      network_path ? std::nullopt : print_against_iput(*out, *dcuda);
  if (!spread.empty()) print_spread(*out, spread);

  if (!chosen.partial && network_path) {
    // Over the network path: V and T at least 0.85 of the contiguous put of the same bytes.
    for (const layout_kind kind : {layout_kind::column_block, layout_kind::lower_triangle}) {
      out->check({std::string(kind == layout_kind::column_block ? "V (column block)"
                                                                : "T (lower triangle)") +
                      ": dcuda_put_notify_typed / contiguous dcuda_put_notify, network path, "
                      "lowest over N",
                  "ratio", lowest[static_cast<int>(kind)], 0.85, false});
    }
  } else if (!chosen.partial) {
    // The typed puts' targets: V at least 0.90 and T at least 0.80 of the contiguous put of the
    // same bytes, every N; the transpose between the two GPUs (every rank of each taking its
    // share, as a dcuda program transposes) at least 10 x faster than host-staged MPI
    // datatypes. One rank's transpose is reported above, without a target.
    out->check(
        {"V (column block): dcuda_put_notify_typed / contiguous dcuda_put_notify, peer "
         "path, lowest over N",
         "ratio", lowest[static_cast<int>(layout_kind::column_block)], 0.90, false});
    out->check(
        {"T (lower triangle): dcuda_put_notify_typed / contiguous dcuda_put_notify, peer "
         "path, lowest over N",
         "ratio", lowest[static_cast<int>(layout_kind::lower_triangle)], 0.80, false});
    out->check(
        {"X (transpose): host-staged MPI time / dcuda_put_notify_typed time per transpose, "
         "every rank of both GPUs, lowest over N",
         "ratio", lowest_speedup_all_ranks, 10.0, false});
    std::printf(
        "# X with one rank per GPU: host-staged MPI / dcuda time per transpose, lowest over "
        "N: %.2f (no target)\n",
        lowest_speedup);
    // Where nvshmem_iput's file is given and matched: V no slower than NVSHMEM's iput, every N.
    if (iput_target) out->check(*iput_target);
  }
  out->write_json();
  return 0;
}
