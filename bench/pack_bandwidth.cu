// pack_bandwidth: what dcuda's datatypes cost on a stream (extension, not in the thesis):
// dcuda_pack_async and dcuda_unpack_async of three layouts of an N x N row-major matrix of doubles
// in device memory, N = 1024, 2048, 4096, 8192:
//
//   V  a column block: dcuda_type_vector(N, N/2, N, DCUDA_DOUBLE), count 1, placed at column N/4
//      (the columns N/4 .. 3N/4 - 1: N runs of 4N bytes, a strided layout)
//   T  the lower triangle: dcuda_type_indexed(N, {1, 2, .., N}, {0, N, 2N, ..}, DCUDA_DOUBLE),
//      count 1 (N runs of 8 .. 8N bytes, a listed layout)
//   X  the transpose: dcuda_type_vector(N, 1, N, DCUDA_DOUBLE) resized to extent 8, count N
//      (element j is column j, so the packed matrix is its transpose; runs of 8 bytes)
//
// Bandwidth is packed bytes / time (1 GB = 1e9 B). A repetition queues K calls back to back on
// one stream between two CUDA events, K as the cudaMemcpy reference's (the calls of ~2 GiB, at
// least 3, at most 1000); the figure is the median of 7 repetitions after one untimed one. pack
// reads the matrix and writes a packed buffer; unpack reads that buffer and writes a second
// matrix. At N = 1024 (4 MiB packed, all of it in the L2 cache) a call's GPU time is a few
// microseconds, about what queueing it costs the host: there the figure is the calls' rate as a
// program that queues them back to back sees it, for the references as for dcuda.
//
// References, same run: memcpy_bandwidth.cuh, cudaMemcpyAsync device to device of the packed bytes
// (every layout; the same figure beside pack and unpack), and for V cudaMemcpy2DAsync of the same
// block (N rows of 4N bytes, pitch 8N on the matrix's side, 4N on the packed side), in each
// direction, timed as dcuda's calls are.
//
// Before a case is timed its bytes are checked once: the packed buffer against the values the
// host computes for it (element i of the matrix holds the double i), and the unpacked matrix
// (every typed element, and every other element left as it was). Wrong bytes print FAIL and end
// the program with status 1, no JSON written.
//
// First use (printed after the bandwidth tables, not in the JSON: bench_report's rows hold one
// figure each): the host time of building each type (its constructors), of dcuda_type_commit, of
// the first dcuda_pack_async after the commit and of later calls, a call timed until
// cudaStreamSynchronize returns; the median of 7 rounds of build, commit, pack and free. Once,
// first of all, the first dcuda_pack_async of the process: it makes the GPU's table of layouts
// (docs/design.md, "Datatypes"); from then on dcuda_type_commit uploads each layout itself.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/matrix_layouts.h"
#include "common/message_sizes.h"
#include "common/statistics.h"
#include "dcuda/datatype.h"
#include "reference/memcpy_bandwidth.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "pack_bandwidth";
constexpr const char* description =
    "bandwidth of dcuda_pack_async and dcuda_unpack_async (a column block, the lower triangle "
    "and the transpose of an N x N matrix of doubles, N = 1024 .. 8192) against cudaMemcpyAsync "
    "and cudaMemcpy2DAsync, and the cost of a type's first use; --n=N1,N2,... measures only those "
    "N (multiples of 4, at most 16384) and writes pack_bandwidth_partial.json without targets; "
    "--dcuda-device=N (or $DCUDA_DEVICE) picks the GPU";
constexpr int largest_n = 16384;

[[noreturn]] void fail(const std::string& what) {
  std::fflush(stdout);
  std::fprintf(stderr, "FAIL: %s: %s\n", benchmark, what.c_str());
  std::exit(1);
}

// ---- The command line ---------------------------------------------------------------------------

struct selection {
  int device = 0;
  std::vector<int> sizes{1024, 2048, 4096, 8192};
  bool partial = false;  // --n given: no targets, a JSON of its own
};

int parse_integer(const std::string& text, const char* what, int lowest, int highest) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < lowest || value > highest) {
    std::fprintf(stderr, "%s: %s: '%s' is not an integer of %d..%d\n", benchmark, what,
                 text.c_str(), lowest, highest);
    std::exit(2);
  }
  return static_cast<int>(value);
}

// The GPU (as dcuda_host_init would take it for a single process: --dcuda-device=N, else
// $DCUDA_DEVICE, else 0) and --n; any other argument is an error.
selection select_cases(const options& command_line) {
  selection chosen;
  const int most = std::numeric_limits<int>::max();
  if (const char* device = std::getenv("DCUDA_DEVICE"); device != nullptr && device[0] != '\0') {
    chosen.device = parse_integer(device, "DCUDA_DEVICE", 0, most);
  }
  const std::string device_prefix = "--dcuda-device=";
  const std::string n_prefix = "--n=";
  for (const std::string& argument : command_line.dcuda_arguments) {
    if (argument.rfind(device_prefix, 0) == 0) {
      chosen.device =
          parse_integer(argument.substr(device_prefix.size()), "--dcuda-device", 0, most);
    } else if (argument.rfind(n_prefix, 0) == 0) {
      const std::string list = argument.substr(n_prefix.size());
      chosen.sizes.clear();
      std::size_t at = 0;
      while (at <= list.size()) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const int n = parse_integer(list.substr(at, comma - at), "--n", 4, largest_n);
        if (n % 4 != 0) {
          std::fprintf(stderr, "%s: --n: %d is not a multiple of 4\n", benchmark, n);
          std::exit(2);
        }
        chosen.sizes.push_back(n);
        at = comma + 1;
      }
      chosen.partial = true;
    } else {
      std::fprintf(stderr,
                   "%s: unknown argument '%s' (it takes --out DIR, --n=N1,N2,... and "
                   "--dcuda-device=N; --help says more)\n",
                   benchmark, argument.c_str());
      std::exit(2);
    }
  }
  return chosen;
}

// ---- The layouts --------------------------------------------------------------------------------

const char* letter(layout_kind kind) {
  switch (kind) {
    case layout_kind::column_block:
      return "V";
    case layout_kind::lower_triangle:
      return "T";
    case layout_kind::transpose:
      return "X";
  }
  return "?";
}

// How the type is made, and what the rows' Size is, for the tables' titles.
const char* kind_detail(layout_kind kind) {
  switch (kind) {
    case layout_kind::column_block:
      return "V, a column block of an N x N row-major matrix of doubles: "
             "dcuda_type_vector(N, N/2, N, DCUDA_DOUBLE), count 1, at column N/4; one row per N, "
             "Size = packed bytes = 4 N^2";
    case layout_kind::lower_triangle:
      return "T, the lower triangle of an N x N row-major matrix of doubles: "
             "dcuda_type_indexed(N, {1, 2, .., N}, {0, N, 2N, ..}, DCUDA_DOUBLE), count 1; one "
             "row per N, Size = packed bytes = 4 N (N + 1)";
    case layout_kind::transpose:
      return "X, the transpose of an N x N row-major matrix of doubles: "
             "dcuda_type_vector(N, 1, N, DCUDA_DOUBLE) resized to extent 8, count N; one row per "
             "N, Size = packed bytes = 8 N^2";
  }
  return "?";
}

// The arguments of dcuda_type_indexed for the lower triangle of an n x n matrix.
struct triangle_arrays {
  std::vector<int> lengths;
  std::vector<int> displacements;
  explicit triangle_arrays(int n) {
    for (int row = 0; row < n; ++row) {
      lengths.push_back(row + 1);
      displacements.push_back(row * n);
    }
  }
};

// A committed-or-not type of `kind` for an n x n matrix, and how it is used.
struct typed_case {
  layout_kind kind;
  int n;
  dcuda_datatype type;
  int count;                    // elements of `type` packed
  std::size_t origin;           // where the first element starts in the matrix, in doubles
  std::size_t packed_elements;  // doubles packed

  std::size_t packed_bytes() const { return packed_elements * sizeof(double); }
};

// Builds the type (not committed); `triangle` must be of the same n.
typed_case build_case(layout_kind kind, int n, const triangle_arrays& triangle) {
  const std::size_t size = static_cast<std::size_t>(n);
  typed_case c{kind, n, DCUDA_DATATYPE_NULL, 1, 0, 0};
  switch (kind) {
    case layout_kind::column_block:
      dcuda_type_vector(n, n / 2, n, DCUDA_DOUBLE, &c.type);
      c.origin = size / 4;
      c.packed_elements = size * (size / 2);
      break;
    case layout_kind::lower_triangle:
      dcuda_type_indexed(n, triangle.lengths.data(), triangle.displacements.data(), DCUDA_DOUBLE,
                         &c.type);
      c.packed_elements = size * (size + 1) / 2;
      break;
    case layout_kind::transpose: {
      dcuda_datatype column = DCUDA_DATATYPE_NULL;
      dcuda_type_vector(n, 1, n, DCUDA_DOUBLE, &column);
      dcuda_type_resized(column, 0, sizeof(double), &c.type);
      dcuda_type_free(&column);  // the resized type stays valid
      c.count = n;
      c.packed_elements = size * size;
      break;
    }
  }
  return c;
}

// Calls visit(packed index, matrix index) for every typed element, in packed order (the type
// map's), the matrix index counted from the matrix's first element (row * n + column).
template <typename Visit>
void for_each_typed(const typed_case& c, Visit visit) {
  const std::size_t n = static_cast<std::size_t>(c.n);
  std::size_t packed = 0;
  switch (c.kind) {
    case layout_kind::column_block:
      for (std::size_t row = 0; row < n; ++row) {
        for (std::size_t k = 0; k < n / 2; ++k) visit(packed++, row * n + c.origin + k);
      }
      break;
    case layout_kind::lower_triangle:
      for (std::size_t row = 0; row < n; ++row) {
        for (std::size_t column = 0; column <= row; ++column) visit(packed++, row * n + column);
      }
      break;
    case layout_kind::transpose:
      for (std::size_t column = 0; column < n; ++column) {
        for (std::size_t row = 0; row < n; ++row) visit(packed++, row * n + column);
      }
      break;
  }
}

// Whether the case's type covers matrix element (row, column).
bool typed_element(const typed_case& c, std::size_t row, std::size_t column) {
  const std::size_t n = static_cast<std::size_t>(c.n);
  switch (c.kind) {
    case layout_kind::column_block:
      return column >= c.origin && column < c.origin + n / 2;
    case layout_kind::lower_triangle:
      return column <= row;
    case layout_kind::transpose:
      return true;
  }
  return false;
}

std::string case_text(const typed_case& c) {
  return std::string(kind_name(c.kind)) + ", N = " + std::to_string(c.n);
}

std::string element_text(std::size_t index, int n) {
  const std::size_t width = static_cast<std::size_t>(n);
  return "row " + std::to_string(index / width) + ", column " + std::to_string(index % width);
}

std::uint64_t bits_of(double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// Element i of the matrix holds the double i (exact: i < 2^53), so each packed value names the
// element it came from.
__global__ void number_elements(double* matrix, std::size_t count) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    matrix[i] = static_cast<double>(i);
  }
}

// ---- Checking the bytes -------------------------------------------------------------------------

constexpr unsigned char untouched = 0xFF;  // what the unpack target holds before the unpack

// Packs and unpacks once (the type committed) and checks every byte on the host.
void check_bytes(const typed_case& c, const double* matrix, double* packed, double* target,
                 cudaStream_t stream) {
  const std::size_t elements = static_cast<std::size_t>(c.n) * static_cast<std::size_t>(c.n);
  BENCH_CUDA_CHECK(cudaMemsetAsync(packed, 0, c.packed_bytes(), stream));
  dcuda_pack_async(c.type, c.count, matrix + c.origin, packed, stream);
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> got(c.packed_elements);
  BENCH_CUDA_CHECK(cudaMemcpy(got.data(), packed, c.packed_bytes(), cudaMemcpyDeviceToHost));
  for_each_typed(c, [&](std::size_t at, std::size_t element) {
    if (bits_of(got[at]) != bits_of(static_cast<double>(element))) {
      fail("dcuda_pack_async of " + case_text(c) + ": packed element " + std::to_string(at) +
           " is " + std::to_string(got[at]) + ", expected " + std::to_string(element) +
           " (the matrix's " + element_text(element, c.n) + ")");
    }
  });
  got = {};

  BENCH_CUDA_CHECK(cudaMemsetAsync(target, untouched, elements * sizeof(double), stream));
  dcuda_unpack_async(c.type, c.count, packed, target + c.origin, stream);
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<std::uint64_t> unpacked(elements);
  BENCH_CUDA_CHECK(
      cudaMemcpy(unpacked.data(), target, elements * sizeof(double), cudaMemcpyDeviceToHost));
  const std::size_t n = static_cast<std::size_t>(c.n);
  for (std::size_t element = 0; element < elements; ++element) {
    const bool typed = typed_element(c, element / n, element % n);
    const std::uint64_t expected =
        typed ? bits_of(static_cast<double>(element)) : std::numeric_limits<std::uint64_t>::max();
    if (unpacked[element] != expected) {
      fail("dcuda_unpack_async of " + case_text(c) + ": the target's " +
           element_text(element, c.n) +
           (typed ? " was not unpacked right" : " is not in the type but was written"));
    }
  }
}

// ---- Timing -------------------------------------------------------------------------------------

// Median and range of a measurement's repetitions.
// Calls per repetition: as memcpy_reference makes its copies (~2 GiB or 1000 calls, at least 3).
int calls_for(std::size_t bytes) {
  return static_cast<int>(std::clamp<std::size_t>(2 * GiB / bytes, 3, 1000));
}

// Times calls queued back to back on one stream between two events.
class stream_timer {
 public:
  stream_timer() {
    BENCH_CUDA_CHECK(cudaEventCreate(&start_));
    BENCH_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~stream_timer() {
    cudaEventDestroy(stop_);
    cudaEventDestroy(start_);
  }
  stream_timer(const stream_timer&) = delete;
  stream_timer& operator=(const stream_timer&) = delete;

  cudaStream_t stream() const { return stream_.get(); }

  // GB/s of calls that each move `bytes`; enqueue(stream) queues one call.
  template <typename Enqueue>
  figure gigabytes_per_second(std::size_t bytes, Enqueue enqueue) {
    const int calls = calls_for(bytes);
    for (int i = 0; i < calls; ++i) enqueue(stream());  // warm-up
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream()));
    std::vector<double> rates;
    for (int repetition = 0; repetition < repetitions; ++repetition) {
      BENCH_CUDA_CHECK(cudaEventRecord(start_, stream()));
      for (int i = 0; i < calls; ++i) enqueue(stream());
      BENCH_CUDA_CHECK(cudaEventRecord(stop_, stream()));
      BENCH_CUDA_CHECK(cudaEventSynchronize(stop_));
      float milliseconds = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start_, stop_));
      rates.push_back(static_cast<double>(bytes) * calls / (milliseconds * 1e-3) / 1e9);
    }
    return summary(rates);
  }

 private:
  owned_stream stream_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

using host_clock = std::chrono::steady_clock;

double microseconds_since(host_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(host_clock::now() - start).count();
}

// One dcuda_pack_async, from the call until the stream has finished it (host time, us).
double timed_pack(const typed_case& c, const double* matrix, double* packed, cudaStream_t stream) {
  const host_clock::time_point start = host_clock::now();
  dcuda_pack_async(c.type, c.count, matrix + c.origin, packed, stream);
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return microseconds_since(start);
}

// Host times of one round of a type's first use: build, commit, first pack, later packs (us).
struct first_use_round {
  double build_us = 0;
  double commit_us = 0;
  double first_us = 0;
  std::vector<double> later_us;
};

first_use_round time_first_use(layout_kind kind, int n, const triangle_arrays& triangle,
                               const double* matrix, double* packed, cudaStream_t stream) {
  first_use_round round;
  host_clock::time_point start = host_clock::now();
  typed_case c = build_case(kind, n, triangle);
  round.build_us = microseconds_since(start);
  start = host_clock::now();
  dcuda_type_commit(&c.type);
  round.commit_us = microseconds_since(start);
  round.first_us = timed_pack(c, matrix, packed, stream);
  for (int i = 0; i < repetitions; ++i) {
    round.later_us.push_back(timed_pack(c, matrix, packed, stream));
  }
  dcuda_type_free(&c.type);
  return round;
}

// A row of the first-use table: medians over the rounds (later calls: over all of them).
struct first_use_row {
  std::string label;
  int n = 0;
  double build_us = 0;
  double commit_us = 0;
  double first_us = 0;
  double later_us = 0;
};

first_use_row first_use_of(std::string label, int n, const std::vector<first_use_round>& rounds) {
  std::vector<double> build, commit, first, later;
  for (const first_use_round& round : rounds) {
    build.push_back(round.build_us);
    commit.push_back(round.commit_us);
    first.push_back(round.first_us);
    later.insert(later.end(), round.later_us.begin(), round.later_us.end());
  }
  return {std::move(label),           n,
          dcuda_bench::median(build), dcuda_bench::median(commit),
          dcuda_bench::median(first), dcuda_bench::median(later)};
}

void print_first_use(const std::vector<first_use_row>& rows) {
  std::printf(
      "# dcuda %s: first use: host time of building the type (its constructors), of "
      "dcuda_type_commit, of the first dcuda_pack_async after the commit and of later calls (a "
      "call: until cudaStreamSynchronize returns); median of %d rounds of build, commit, pack, "
      "free (later calls: %d per round)\n",
      benchmark, repetitions, repetitions);
  std::printf(
      "# row \"V first\": one round, the first dcuda_pack_async of the process, which makes the "
      "GPU's table of layouts (and loads the copy kernel where CUDA loads kernels lazily, its "
      "default); after it every dcuda_type_commit uploads its layout into the table\n");
  std::printf("%-10s%7s%14s%14s%18s%18s%14s\n", "# Type", "N", "build (us)", "commit (us)",
              "first pack (us)", "later pack (us)", "first/later");
  for (const first_use_row& r : rows) {
    std::printf("%-10s%7d%14.2f%14.2f%18.2f%18.2f%14.2f\n", r.label.c_str(), r.n, r.build_us,
                r.commit_us, r.first_us, r.later_us,
                r.later_us > 0 ? r.first_us / r.later_us : 0.0);
  }
  std::printf("\n");
  std::fflush(stdout);
}

// ---- One N --------------------------------------------------------------------------------------

// The figures of one layout at one N (GB/s).
struct case_figures {
  std::size_t packed_bytes = 0;
  figure pack;
  figure unpack;
  double memcpy = 0;     // cudaMemcpyAsync of the packed bytes
  double pack_2d = 0;    // V only: cudaMemcpy2DAsync, matrix -> packed
  double unpack_2d = 0;  // V only: packed -> matrix
};

// The device buffers, for the largest N of the run.
struct buffers {
  const device_bytes& matrix;  // numbered
  const device_bytes& packed;
  const device_bytes& target;  // unpack's matrix
};

case_figures measure(const typed_case& c, const buffers& memory, stream_timer& timer,
                     memcpy_reference& reference) {
  const double* matrix = memory.matrix.get<double>();
  double* packed = memory.packed.get<double>();
  double* target = memory.target.get<double>();
  case_figures figures;
  figures.packed_bytes = c.packed_bytes();
  check_bytes(c, matrix, packed, target, timer.stream());
  figures.pack = timer.gigabytes_per_second(c.packed_bytes(), [&](cudaStream_t stream) {
    dcuda_pack_async(c.type, c.count, matrix + c.origin, packed, stream);
  });
  figures.unpack = timer.gigabytes_per_second(c.packed_bytes(), [&](cudaStream_t stream) {
    dcuda_unpack_async(c.type, c.count, packed, target + c.origin, stream);
  });
  figures.memcpy = reference.gigabytes_per_second(c.packed_bytes());
  if (c.kind == layout_kind::column_block) {
    const std::size_t row_bytes = static_cast<std::size_t>(c.n) * sizeof(double);
    const std::size_t block_bytes = row_bytes / 2;  // = the packed row
    const std::size_t rows = static_cast<std::size_t>(c.n);
    const auto pack_2d = [&](cudaStream_t stream) {
      BENCH_CUDA_CHECK(cudaMemcpy2DAsync(packed, block_bytes, matrix + c.origin, row_bytes,
                                         block_bytes, rows, cudaMemcpyDeviceToDevice, stream));
    };
    const auto unpack_2d = [&](cudaStream_t stream) {
      BENCH_CUDA_CHECK(cudaMemcpy2DAsync(target + c.origin, row_bytes, packed, block_bytes,
                                         block_bytes, rows, cudaMemcpyDeviceToDevice, stream));
    };
    figures.pack_2d = timer.gigabytes_per_second(c.packed_bytes(), pack_2d).median;
    figures.unpack_2d = timer.gigabytes_per_second(c.packed_bytes(), unpack_2d).median;
  }
  return figures;
}

void number_matrix(const device_bytes& matrix, int n, cudaStream_t stream) {
  const std::size_t elements = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  number_elements<<<1024, 256, 0, stream>>>(matrix.get<double>(), elements);
  check_cuda(cudaGetLastError(), "number_elements<<<>>>", __FILE__, __LINE__);
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

table bandwidth_table(const std::string& title, const std::string& reference_name,
                      const std::string& reference_detail) {
  return table{title, "GB/s", reference_name, reference_detail, 0, 0, 0, {}};
}

}  // namespace

int main(int argc, char** argv) {
  options command_line = parse_options(argc, argv, benchmark, description);
  const selection chosen = select_cases(command_line);
  if (skip_without_gpu(benchmark)) return 0;
  BENCH_CUDA_CHECK(cudaSetDevice(chosen.device));
  report out(chosen.partial ? std::string(benchmark) + "_partial" : std::string(benchmark),
             command_line, current_device());

  const int largest = *std::max_element(chosen.sizes.begin(), chosen.sizes.end());
  const std::size_t matrix_bytes =
      static_cast<std::size_t>(largest) * static_cast<std::size_t>(largest) * sizeof(double);
  const device_bytes matrix(matrix_bytes);
  const device_bytes packed(matrix_bytes);  // the transpose packs the whole matrix
  const device_bytes target(matrix_bytes);
  const buffers memory{matrix, packed, target};
  memcpy_reference reference(matrix_bytes);
  stream_timer timer;

  // First use: before any other dcuda_pack_async of the process, once (the GPU's table of
  // layouts is made by this call), then 7 rounds of every case.
  std::vector<first_use_row> first_use;
  number_matrix(matrix, chosen.sizes.front(), timer.stream());
  {
    const triangle_arrays triangle(chosen.sizes.front());
    first_use.push_back(
        first_use_of("V first", chosen.sizes.front(),
                     {time_first_use(layout_kind::column_block, chosen.sizes.front(), triangle,
                                     matrix.get<double>(), packed.get<double>(), timer.stream())}));
  }

  std::vector<case_figures> measured[kind_count];  // [kind][index of N]
  for (const int n : chosen.sizes) {
    number_matrix(matrix, n, timer.stream());
    const triangle_arrays triangle(n);
    for (const layout_kind kind : kinds) {
      std::vector<first_use_round> rounds;
      for (int round = 0; round < repetitions; ++round) {
        rounds.push_back(time_first_use(kind, n, triangle, matrix.get<double>(),
                                        packed.get<double>(), timer.stream()));
      }
      first_use.push_back(first_use_of(letter(kind), n, rounds));

      typed_case c = build_case(kind, n, triangle);
      dcuda_type_commit(&c.type);
      measured[static_cast<int>(kind)].push_back(measure(c, memory, timer, reference));
      dcuda_type_free(&c.type);
    }
  }

  // The tables: pack, then unpack, of every layout against cudaMemcpy; V against cudaMemcpy2D.
  const std::string memcpy_detail =
      "cudaMemcpyAsync device to device of the packed bytes (the same figure beside pack and "
      "unpack); dcuda's calls and the copies queued back to back on one stream, timed with CUDA "
      "events";
  double lowest[kind_count][2];  // [kind][0 pack, 1 unpack]: lowest ratio to cudaMemcpy over N
  for (const int direction : {0, 1}) {
    const bool unpacking = direction == 1;
    const char* call = unpacking ? "dcuda_unpack_async" : "dcuda_pack_async";
    for (const layout_kind kind : kinds) {
      const int k = static_cast<int>(kind);
      table results = bandwidth_table(std::string(call) + " of " + kind_detail(kind), "cudaMemcpy",
                                      memcpy_detail);
      lowest[k][direction] = std::numeric_limits<double>::infinity();
      for (const case_figures& f : measured[k]) {
        const figure& dcuda = unpacking ? f.unpack : f.pack;
        results.rows.push_back({f.packed_bytes, dcuda.median, f.memcpy, dcuda.min, dcuda.max});
        lowest[k][direction] = std::min(lowest[k][direction], dcuda.median / f.memcpy);
      }
      out.print(results);
    }
  }
  double lowest_2d[2];  // [0 pack, 1 unpack]: V's lowest ratio to cudaMemcpy2D over N
  for (const int direction : {0, 1}) {
    const bool unpacking = direction == 1;
    table results = bandwidth_table(
        std::string(unpacking ? "dcuda_unpack_async" : "dcuda_pack_async") + " of " +
            kind_detail(layout_kind::column_block) + "; against cudaMemcpy2D",
        "cudaMemcpy2D",
        unpacking ? "cudaMemcpy2DAsync device to device of the same block, packed -> matrix: N "
                    "rows of 4N bytes, source pitch 4N (packed), destination pitch 8N"
                  : "cudaMemcpy2DAsync device to device of the same block, matrix -> packed: N "
                    "rows of 4N bytes, source pitch 8N, destination pitch 4N (packed)");
    lowest_2d[direction] = std::numeric_limits<double>::infinity();
    for (const case_figures& f : measured[static_cast<int>(layout_kind::column_block)]) {
      const figure& dcuda = unpacking ? f.unpack : f.pack;
      const double copy = unpacking ? f.unpack_2d : f.pack_2d;
      results.rows.push_back({f.packed_bytes, dcuda.median, copy, dcuda.min, dcuda.max});
      lowest_2d[direction] = std::min(lowest_2d[direction], dcuda.median / copy);
    }
    out.print(results);
  }
  print_first_use(first_use);

  if (!chosen.partial) {
    // The targets of the datatype engine: V at least 0.90 of cudaMemcpy of the same bytes, T at
    // least 0.80 (pack and unpack, every N), V at least 0.95 of cudaMemcpy2D. X has none.
    const int v = static_cast<int>(layout_kind::column_block);
    const int t = static_cast<int>(layout_kind::lower_triangle);
    out.check({"V (column block): dcuda_pack_async / cudaMemcpy, lowest over N", "ratio",
               lowest[v][0], 0.90, false});
    out.check({"V (column block): dcuda_unpack_async / cudaMemcpy, lowest over N", "ratio",
               lowest[v][1], 0.90, false});
    out.check({"T (lower triangle): dcuda_pack_async / cudaMemcpy, lowest over N", "ratio",
               lowest[t][0], 0.80, false});
    out.check({"T (lower triangle): dcuda_unpack_async / cudaMemcpy, lowest over N", "ratio",
               lowest[t][1], 0.80, false});
    out.check({"V (column block): dcuda_pack_async / cudaMemcpy2D, lowest over N", "ratio",
               lowest_2d[0], 0.95, false});
    out.check({"V (column block): dcuda_unpack_async / cudaMemcpy2D, lowest over N", "ratio",
               lowest_2d[1], 0.95, false});
  }
  out.write_json();
  return 0;
}
