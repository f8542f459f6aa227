// Datatypes on the GPU: stream-ordered pack and unpack (dcuda_pack_async, dcuda_unpack_async) and
// the ranks' dcuda_pack / dcuda_unpack, of a matrix's column block (vector), its lower triangle
// (indexed) and its transpose (a one-element vector resized), every byte checked against a loop
// that walks the same layout by hand, the bytes between the typed ones left untouched; and the
// misuses a kernel can make of a type.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dcuda/datatype.h"
#include "dcuda/device.cuh"
#include "gpu_harness.h"

using gpu_test::contains;
using gpu_test::require_gpu;
using gpu_test::run_child;
using gpu_test::run_dcuda;

namespace {

constexpr int n = 96;              // the matrices are n x n doubles, row-major
constexpr int block_columns = 20;  // the column block: columns [7, 27)
constexpr int block_first_column = 7;
constexpr int wide_columns = 80;  // 640-byte runs
constexpr unsigned char untouched = 0xA5;

// A layout and the element offsets (in doubles, packed order) it stands for, for count elements.
struct typed_case {
  const char* name;
  dcuda_datatype type;
  int count;
  std::vector<int> elements;
};

std::vector<typed_case> matrix_cases() {
  std::vector<typed_case> cases;
  {
    typed_case c{"column block", {}, 1, {}};
    dcuda_type_vector(n, block_columns, n, DCUDA_DOUBLE, &c.type);
    for (int row = 0; row < n; ++row) {
      for (int k = 0; k < block_columns; ++k)
        c.elements.push_back(row * n + block_first_column + k);
    }
    cases.push_back(c);
  }
  {
    typed_case c{"lower triangle", {}, 1, {}};
    std::vector<int> lengths, displacements;
    for (int row = 0; row < n; ++row) {
      lengths.push_back(row + 1);
      displacements.push_back(row * n);
      for (int column = 0; column <= row; ++column) c.elements.push_back(row * n + column);
    }
    dcuda_type_indexed(n, lengths.data(), displacements.data(), DCUDA_DOUBLE, &c.type);
    cases.push_back(c);
  }
  {
    // Element j is column j (n doubles n apart); consecutive elements one double apart: packing
    // n of them lists the matrix column by column, the transpose.
    typed_case c{"transpose", {}, n, {}};
    dcuda_datatype column;
    dcuda_type_vector(n, 1, n, DCUDA_DOUBLE, &column);
    dcuda_type_resized(column, 0, sizeof(double), &c.type);
    dcuda_type_free(&column);
    for (int j = 0; j < n; ++j) {
      for (int row = 0; row < n; ++row) c.elements.push_back(row * n + j);
    }
    cases.push_back(c);
  }
  {
    // Two doubles a row: 16-byte runs, 16-byte aligned, so the copy moves 16 bytes an access.
    typed_case c{"pairs", {}, 1, {}};
    dcuda_type_vector(n, 2, n, DCUDA_DOUBLE, &c.type);
    for (int row = 0; row < n; ++row) {
      for (int k = 0; k < 2; ++k) c.elements.push_back(row * n + k);
    }
    cases.push_back(c);
  }
  {
    // Runs long enough for the vector fast path of dcuda_pack_async (a warp's lanes together on
    // each run): 80 doubles a row, two elements of half the rows each (resized to half the
    // matrix).
    typed_case c{"two wide blocks", {}, 2, {}};
    dcuda_datatype rows;
    dcuda_type_vector(n / 2, wide_columns, n, DCUDA_DOUBLE, &rows);
    dcuda_type_resized(rows, 0, static_cast<std::int64_t>(n / 2 * n * sizeof(double)), &c.type);
    dcuda_type_free(&rows);
    for (int row = 0; row < n; ++row) {
      for (int k = 0; k < wide_columns; ++k) c.elements.push_back(row * n + k);
    }
    cases.push_back(c);
  }
  {
    // One run of the whole matrix: the fast path cuts it into several segments.
    typed_case c{"whole matrix", {}, 1, {}};
    dcuda_type_contiguous(n * n, DCUDA_DOUBLE, &c.type);
    for (int i = 0; i < n * n; ++i) c.elements.push_back(i);
    cases.push_back(c);
  }
  for (auto& c : cases) dcuda_type_commit(&c.type);
  return cases;
}

// The block-shifted copy of the column block's offsets: the first element of the typed buffer is
// where the block starts.
int typed_origin(const typed_case& c) {
  return std::string(c.name) == "column block" ? block_first_column : 0;
}

std::vector<double> numbered_matrix() {
  std::vector<double> values(n * n);
  for (int i = 0; i < n * n; ++i) values[static_cast<std::size_t>(i)] = 1000.0 + i;
  return values;
}

template <typename T>
T* device_copy(const std::vector<T>& host) {
  T* device = nullptr;
  GPU_CHECK(cudaMalloc(&device, host.size() * sizeof(T)));
  GPU_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

template <typename T>
std::vector<T> host_copy(const T* device, std::size_t count) {
  std::vector<T> host(count);
  GPU_CHECK(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// The matrix after unpacking `packed` as `c` into a matrix of `untouched` bytes.
std::vector<unsigned char> expected_unpacked(const typed_case& c,
                                             const std::vector<double>& packed) {
  std::vector<unsigned char> bytes(n * n * sizeof(double), untouched);
  for (std::size_t i = 0; i < c.elements.size(); ++i) {
    std::memcpy(bytes.data() + static_cast<std::size_t>(c.elements[i]) * sizeof(double), &packed[i],
                sizeof(double));
  }
  return bytes;
}

}  // namespace

DCUDA_TEST(pack_async_and_unpack_async_move_every_typed_byte) {
  require_gpu();
  const std::vector<double> matrix = numbered_matrix();
  double* source = device_copy(matrix);
  double* packed = nullptr;
  unsigned char* target = nullptr;
  GPU_CHECK(cudaMalloc(&packed, matrix.size() * sizeof(double)));
  GPU_CHECK(cudaMalloc(&target, matrix.size() * sizeof(double)));
  cudaStream_t stream;
  GPU_CHECK(cudaStreamCreate(&stream));
  for (auto& c : matrix_cases()) {
    const int origin = typed_origin(c);
    GPU_CHECK(cudaMemsetAsync(packed, untouched, matrix.size() * sizeof(double), stream));
    dcuda_pack_async(c.type, c.count, source + origin, packed, stream);
    GPU_CHECK(cudaMemsetAsync(target, untouched, matrix.size() * sizeof(double), stream));
    dcuda_unpack_async(c.type, c.count, packed, target + origin * sizeof(double), stream);
    GPU_CHECK(cudaStreamSynchronize(stream));
    const auto got = host_copy(packed, c.elements.size());
    std::vector<double> want;
    for (int e : c.elements) want.push_back(matrix[static_cast<std::size_t>(e)]);
    DCUDA_CHECK(got == want);
    // Nothing past the packed bytes was written.
    const auto packed_bytes =
        host_copy(reinterpret_cast<unsigned char*>(packed), matrix.size() * sizeof(double));
    DCUDA_CHECK(std::all_of(packed_bytes.begin() + static_cast<std::ptrdiff_t>(want.size() * 8),
                            packed_bytes.end(), [](unsigned char b) { return b == untouched; }));
    DCUDA_CHECK(host_copy(target, matrix.size() * sizeof(double)) == expected_unpacked(c, want));
    dcuda_type_free(&c.type);
  }
  GPU_CHECK(cudaStreamDestroy(stream));
  cudaFree(source);
  cudaFree(packed);
  cudaFree(target);
}

namespace {

// Keeps its stream busy for about `cycles` clock cycles.
__global__ void busy_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

// A copy queued behind other work, whose type is freed (and its slot taken by a new type) before
// the copy runs, still copies with its own type: the kernel has the layout from its launch, and
// dcuda_type_free waits for the GPU before it frees the type's tables.
DCUDA_TEST(a_pack_queued_before_its_type_is_freed_copies_with_that_type) {
  require_gpu();
  const std::vector<double> matrix = numbered_matrix();
  double* source = device_copy(matrix);
  double* packed = nullptr;
  GPU_CHECK(cudaMalloc(&packed, matrix.size() * sizeof(double)));
  cudaStream_t stream;
  GPU_CHECK(cudaStreamCreate(&stream));
  busy_kernel<<<1, 1, 0, stream>>>(0);  // loaded before the timed use
  GPU_CHECK(cudaStreamSynchronize(stream));
  for (auto& c : matrix_cases()) {
    GPU_CHECK(cudaMemsetAsync(packed, untouched, matrix.size() * sizeof(double), stream));
    busy_kernel<<<1, 1, 0, stream>>>(100'000'000);  // tens of milliseconds
    dcuda_pack_async(c.type, c.count, source + typed_origin(c), packed, stream);
    dcuda_type_free(&c.type);
    dcuda_datatype other = DCUDA_DATATYPE_NULL;
    dcuda_type_contiguous(3, DCUDA_DOUBLE, &other);
    dcuda_type_commit(&other);
    GPU_CHECK(cudaStreamSynchronize(stream));
    std::vector<double> want;
    for (int e : c.elements) want.push_back(matrix[static_cast<std::size_t>(e)]);
    DCUDA_CHECK(host_copy(packed, c.elements.size()) == want);
    dcuda_type_free(&other);
  }
  GPU_CHECK(cudaStreamDestroy(stream));
  cudaFree(source);
  cudaFree(packed);
}

DCUDA_TEST(pack_async_of_odd_byte_runs_at_an_odd_address_moves_byte_by_byte) {
  require_gpu();
  // 64 runs of 3 bytes, 10 bytes apart, from byte 1 of the buffer: every access one byte wide.
  constexpr int runs = 64, run_bytes = 3, stride = 10, bytes = runs * stride + 1;
  std::vector<unsigned char> host(bytes);
  for (int i = 0; i < bytes; ++i)
    host[static_cast<std::size_t>(i)] = static_cast<unsigned char>(i * 7 + 3);
  unsigned char* source = device_copy(host);
  unsigned char* packed = nullptr;
  GPU_CHECK(cudaMalloc(&packed, bytes));
  GPU_CHECK(cudaMemset(packed, untouched, bytes));
  dcuda_datatype odd;
  dcuda_type_hvector(runs, run_bytes, stride, DCUDA_BYTE, &odd);
  dcuda_type_commit(&odd);
  dcuda_pack_async(odd, 1, source + 1, packed, nullptr);
  GPU_CHECK(cudaDeviceSynchronize());
  const auto got = host_copy(packed, bytes);
  for (int r = 0; r < runs; ++r) {
    for (int k = 0; k < run_bytes; ++k) {
      DCUDA_CHECK_EQ(got[static_cast<std::size_t>(r * run_bytes + k)],
                     host[static_cast<std::size_t>(1 + r * stride + k)]);
    }
  }
  for (int i = runs * run_bytes; i < bytes; ++i) {
    DCUDA_CHECK_EQ(got[static_cast<std::size_t>(i)], untouched);
  }
  dcuda_type_free(&odd);
  cudaFree(source);
  cudaFree(packed);
}

namespace {

struct rank_pack_data {
  dcuda_datatype types[3];
  int counts[3];
  int origins[3];
  const double* source;     // the numbered matrix, read by every rank
  double* packed;           // [ranks][3][n * n]
  unsigned char* unpacked;  // [ranks][3][n * n doubles], `untouched` before the run
};

__global__ void rank_pack_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  rank_pack_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  for (int t = 0; t < 3; ++t) {
    const std::size_t slot = (static_cast<std::size_t>(rank) * 3 + t) * n * n;
    double* packed = data->packed + slot;
    dcuda_pack(gst, data->types[t], data->counts[t], data->source + data->origins[t], packed);
    dcuda_unpack(gst, data->types[t], data->counts[t], packed,
                 data->unpacked + (slot + data->origins[t]) * sizeof(double));
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(ranks_pack_and_unpack_typed_data_with_all_their_warps) {
  require_gpu();
  // 160 threads a rank: five warps share each copy; 100: not a multiple of the warp, every
  // thread works alone.
  for (const int threads : {160, 100}) {
    const int ranks = gpu_test::resident_ranks(rank_pack_kernel, threads, 8);
    const std::vector<double> matrix = numbered_matrix();
    const std::size_t slots = static_cast<std::size_t>(ranks) * 3 * n * n;
    auto cases = matrix_cases();
    rank_pack_data data{};
    for (int t = 0; t < 3; ++t) {
      data.types[t] = cases[static_cast<std::size_t>(t)].type;
      data.counts[t] = cases[static_cast<std::size_t>(t)].count;
      data.origins[t] = typed_origin(cases[static_cast<std::size_t>(t)]);
    }
    double* source = device_copy(matrix);
    data.source = source;
    GPU_CHECK(cudaMalloc(&data.packed, slots * sizeof(double)));
    GPU_CHECK(cudaMalloc(&data.unpacked, slots * sizeof(double)));
    GPU_CHECK(cudaMemset(data.unpacked, untouched, slots * sizeof(double)));
    run_dcuda(rank_pack_kernel, threads, data,
              {"--dcuda-ranks-per-device=" + std::to_string(ranks)});
    const auto packed = host_copy(data.packed, slots);
    const auto unpacked = host_copy(data.unpacked, slots * sizeof(double));
    for (int r = 0; r < ranks; ++r) {
      for (int t = 0; t < 3; ++t) {
        const auto& c = cases[static_cast<std::size_t>(t)];
        const std::size_t slot = (static_cast<std::size_t>(r) * 3 + t) * n * n;
        std::vector<double> want;
        for (int e : c.elements) want.push_back(matrix[static_cast<std::size_t>(e)]);
        DCUDA_CHECK(std::equal(want.begin(), want.end(),
                               packed.begin() + static_cast<std::ptrdiff_t>(slot)));
        const auto begin = unpacked.begin() + static_cast<std::ptrdiff_t>(slot * sizeof(double));
        DCUDA_CHECK(std::vector<unsigned char>(begin, begin + n * n * sizeof(double)) ==
                    expected_unpacked(c, want));
      }
    }
    for (auto& c : cases) dcuda_type_free(&c.type);
    cudaFree(source);
    cudaFree(data.packed);
    cudaFree(data.unpacked);
  }
}

namespace {

struct misuse_type_data {
  dcuda_datatype type;
  double* buffer;  // n * n doubles
  bool unpack;
};

__global__ void misuse_type_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  misuse_type_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  if (data->unpack) {
    dcuda_unpack(gst, data->type, 1, data->buffer, data->buffer + n);
  } else {
    dcuda_pack(gst, data->type, 1, data->buffer, data->buffer + n);
  }
  dcuda_gpu_finish(gst);
}

// The child's run ended with the device misuse report `report` (after "in "). The type is
// {id 8, generation 1}: the first type a fresh process creates.
void check_type_misuse(const char* scenario, const std::string& report) {
  require_gpu();
  const auto child = run_child(scenario);
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output, "dcuda: error: dcuda_host_run: rank 0 (thread "));
  DCUDA_CHECK(contains(child.output, "in " + report));
}

void run_type_misuse(dcuda_datatype type, bool unpack) {
  double* buffer = nullptr;
  GPU_CHECK(cudaMalloc(&buffer, n * n * sizeof(double)));
  misuse_type_data data{type, buffer, unpack};
  run_dcuda(misuse_type_kernel, 64, data, {"--dcuda-ranks-per-device=1"});
}

}  // namespace

DCUDA_CHILD(pack_with_freed_type) {
  dcuda_datatype pair;
  dcuda_type_contiguous(2, DCUDA_DOUBLE, &pair);
  dcuda_type_commit(&pair);
  const dcuda_datatype stale = pair;
  dcuda_type_free(&pair);
  run_type_misuse(stale, false);
}

DCUDA_TEST(pack_with_a_freed_type_is_reported) {
  check_type_misuse("pack_with_freed_type",
                    "dcuda_pack: datatype {id 8, generation 1} is not a committed datatype");
}

DCUDA_CHILD(unpack_into_overlapping_type) {
  dcuda_datatype twice;
  const int lengths[] = {2, 2};
  const int displacements[] = {0, 1};  // the second double of the first block again
  dcuda_type_indexed(2, lengths, displacements, DCUDA_DOUBLE, &twice);
  dcuda_type_commit(&twice);
  run_type_misuse(twice, true);
}

DCUDA_TEST(unpack_into_a_type_covering_a_byte_twice_is_reported) {
  check_type_misuse("unpack_into_overlapping_type",
                    "dcuda_unpack: 1 elements of datatype {id 8, generation 1} cover some byte "
                    "twice, so they cannot");
}

namespace {

// ---------------------------------------------------------------------------------------------
// Typed puts between the ranks of one GPU: rank r's window holds its numbered source matrix and
// two target areas; it puts its column block into the next rank's first area at another column
// (vector to vector, a different place), and its lower triangle packed into the second area
// (indexed to contiguous), each with a notification.
constexpr int target_column = 40;
constexpr int triangle_elements = n * (n + 1) / 2;
constexpr double never_written = -1.0;

struct typed_put_data {
  dcuda_datatype column_block;
  dcuda_datatype triangle;
  double* windows;  // [ranks][3][n * n]: source, first area, second area
  int ranks;
};

__global__ void typed_put_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  typed_put_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  const bool taking_part = rank < data->ranks;
  double* window = data->windows + static_cast<std::size_t>(rank) * 3 * n * n;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, taking_part ? window : nullptr,
                   taking_part ? 3 * n * n * static_cast<int>(sizeof(double)) : 0, &win);
  if (taking_part) {
    const int next = (rank + 1) % data->ranks;
    constexpr int area = n * n * static_cast<int>(sizeof(double));
    dcuda_put_notify_typed(gst, win, next, area + target_column * static_cast<int>(sizeof(double)),
                           1, data->column_block, window + block_first_column, 1,
                           data->column_block, 1);
    dcuda_put_notify_typed(gst, win, next, 2 * area, triangle_elements, DCUDA_DOUBLE, window, 1,
                           data->triangle, 2);
    dcuda_wait_notifications(gst, 1, 1);
    dcuda_wait_notifications(gst, 2, 1);
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

double numbered(int rank, int element) {
  return rank * 1.0e6 + element;
}

}  // namespace

DCUDA_TEST(typed_puts_land_every_byte_in_the_target_layout_and_nothing_else) {
  require_gpu();
  const int ranks = gpu_test::resident_ranks(typed_put_kernel, 128, 4);
  auto cases = matrix_cases();  // column block, lower triangle, transpose
  typed_put_data data{cases[0].type, cases[1].type, nullptr, ranks};
  std::vector<double> host(static_cast<std::size_t>(ranks) * 3 * n * n, never_written);
  for (int r = 0; r < ranks; ++r) {
    for (int i = 0; i < n * n; ++i) {
      host[static_cast<std::size_t>(r) * 3 * n * n + static_cast<std::size_t>(i)] = numbered(r, i);
    }
  }
  data.windows = device_copy(host);
  run_dcuda(typed_put_kernel, 128, data);
  const auto got = host_copy(data.windows, host.size());
  for (int r = 0; r < ranks; ++r) {
    const int from = (r + ranks - 1) % ranks;
    std::vector<double> want_first(n * n, never_written);
    for (int row = 0; row < n; ++row) {
      for (int k = 0; k < block_columns; ++k) {
        want_first[static_cast<std::size_t>(row * n + target_column + k)] =
            numbered(from, row * n + block_first_column + k);
      }
    }
    std::vector<double> want_second(n * n, never_written);
    for (std::size_t i = 0; i < cases[1].elements.size(); ++i) {
      want_second[i] = numbered(from, cases[1].elements[i]);
    }
    const auto area = [&](int which) {
      const auto begin = got.begin() + static_cast<std::ptrdiff_t>((r * 3 + which) * n * n);
      return std::vector<double>(begin, begin + n * n);
    };
    DCUDA_CHECK(area(1) == want_first);
    DCUDA_CHECK(area(2) == want_second);
  }
  for (auto& c : cases) dcuda_type_free(&c.type);
  cudaFree(data.windows);
}

namespace {

__global__ void typed_sizes_differ_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  typed_put_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, data->windows,
                   3 * n * n * static_cast<int>(sizeof(double)), &win);
  dcuda_put_typed(gst, win, 0, 0, 1, data->triangle, data->windows, 1, data->column_block);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_CHILD(typed_put_sizes_differ) {
  auto cases = matrix_cases();
  std::vector<double> host(3 * n * n, 0.0);
  typed_put_data data{cases[0].type, cases[1].type, device_copy(host), 1};
  run_dcuda(typed_sizes_differ_kernel, 64, data, {"--dcuda-ranks-per-device=1"});
}

DCUDA_TEST(typed_put_with_different_byte_counts_is_reported) {
  require_gpu();
  const auto child = run_child("typed_put_sizes_differ");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output, "in dcuda_put_typed: the source's " +
                                         std::to_string(n * block_columns * sizeof(double)) +
                                         " bytes (count x its type's size) are not the target's " +
                                         std::to_string(triangle_elements * sizeof(double)) +
                                         " bytes"));
}
