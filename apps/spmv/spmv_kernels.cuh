// The device code every spmv (and power iteration) version shares: the block's CSR built on the
// GPU by filtering the generator (spmv_matrix.h), the product of a run of rows, and the addition
// of a received partial result. A dcuda rank calls these for its slice with its block's threads;
// a baseline kernel for the whole block with its whole grid.
#pragma once

#include <memory>
#include <vector>

#include "cuda_resources.h"
#include "spmv_grid.h"
#include "spmv_matrix.h"
#include "spmv_reference.h"

namespace spmv {

struct csr_view {
  const unsigned* row_offsets;
  const int* columns;
  const double* values;
};

// y[r] = scale * (row first + r of A times b), for r = 0..count-1 (scale: power iteration's
// normalisation, 1 for spmv, where the product is then exact); one warp per row (warp `warp` of
// `warps` takes rows warp, warp + warps, ...), lane l adding the entries l, l + 32, ... in
// order, then the lanes' sums combined by a shuffle tree. Entries go SPMV_UNROLL per lane at a
// time, their loads issued before the additions, so that a warp keeps several gathers of b in
// flight (the product is bound by the latency of those gathers from L2: a dcuda rank of 1024
// threads per SM has half the warps of the baselines' kernels to hide it with).
// The matrix is read through the read-only cache; b is not: in the dcuda versions it is
// written by other GPUs while the kernel runs.
#ifndef SPMV_UNROLL
#define SPMV_UNROLL 8
#endif
__device__ inline void multiply_rows(const csr_view a, const double* b, double* y, unsigned first,
                                     unsigned count, unsigned warp, unsigned warps,
                                     double scale = 1.0) {
  constexpr int unroll = SPMV_UNROLL;
  const unsigned lane = threadIdx.x & 31u;
  for (unsigned r = warp; r < count; r += warps) {
    const unsigned begin = __ldg(a.row_offsets + first + r);
    const unsigned end = __ldg(a.row_offsets + first + r + 1);
    double sum = 0;
    unsigned e = begin + lane;
    for (; e + 32 * (unroll - 1) < end; e += 32 * unroll) {
      int column[unroll];
      double value[unroll];
#pragma unroll
      for (int u = 0; u < unroll; ++u) {
        column[u] = __ldg(a.columns + e + 32 * u);
        value[u] = __ldg(a.values + e + 32 * u);
      }
      double vector[unroll];
#pragma unroll
      for (int u = 0; u < unroll; ++u) vector[u] = b[column[u]];
#pragma unroll
      for (int u = 0; u < unroll; ++u) sum += value[u] * vector[u];
    }
    for (; e < end; e += 32) sum += __ldg(a.values + e) * b[__ldg(a.columns + e)];
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xFFFFFFFFu, sum, offset);
    if (lane == 0) y[r] = scale * sum;
  }
}

// y[i] += received[i] for i = thread, thread + threads, ... below count.
__device__ inline void add_into(double* y, const double* received, unsigned count, unsigned thread,
                                unsigned threads) {
  for (unsigned i = thread; i < count; i += threads) y[i] += received[i];
}

__device__ inline unsigned global_thread() {
  return blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ inline unsigned global_threads() {
  return gridDim.x * blockDim.x;
}

// The baselines' kernels over a whole block.
__global__ void multiply_kernel(csr_view a, const double* b, double* y, unsigned rows) {
  multiply_rows(a, b, y, 0, rows, global_thread() / 32, global_threads() / 32);
}
__global__ void add_kernel(double* y, const double* received, unsigned count) {
  add_into(y, received, count, global_thread(), global_threads());
}

// Blocks for a kernel of `threads` threads per block with `work` independent items (rows for one
// warp each, or elements), at most 65535 (the kernels loop).
inline int blocks_for(long long work, int threads_per_item, int threads) {
  const long long blocks = (work * threads_per_item + threads - 1) / threads;
  return static_cast<int>(blocks < 1 ? 1 : blocks < 65535 ? blocks : 65535);
}

// Generation: thread per block row. Counting hashes only the columns; filling writes the kept
// entries in k order at the row's offset (the host's make_block keeps the same ones, in order).
__global__ void count_entries_kernel(matrix_definition m, index_range rows, index_range cols,
                                     unsigned* counts) {
  for (long long r = global_thread(); r < rows.count; r += global_threads()) {
    unsigned count = 0;
    for (int k = 0; k < m.row_nonzeros; ++k) {
      const long long column = entry_column(m, rows.begin + r, k);
      count += column >= cols.begin && column < cols.end();
    }
    counts[r] = count;
  }
}
__global__ void fill_entries_kernel(matrix_definition m, index_range rows, index_range cols,
                                    const unsigned* row_offsets, int* columns, double* values) {
  for (long long r = global_thread(); r < rows.count; r += global_threads()) {
    unsigned at = row_offsets[r];
    for_each_entry_in(m, rows.begin + r, cols, [&](int column, double value) {
      columns[at] = column;
      values[at] = value;
      ++at;
    });
  }
}

// A block of the matrix in device memory, built on the GPU (seconds at the default size; the
// host's make_block would take minutes there).
struct device_csr {
  device_csr(const matrix_definition& m, index_range rows, index_range cols)
      : row_count(rows.count), row_offsets(static_cast<std::size_t>(rows.count) + 1) {
    const int threads = 256;
    const int blocks = blocks_for(rows.count, 1, threads);
    count_entries_kernel<<<blocks, threads>>>(m, rows, cols, row_offsets.get() + 1);
    APP_CUDA(cudaGetLastError());
    // The prefix sum on the host: one pass over the block's rows, small beside the matrix.
    std::vector<unsigned> offsets(row_offsets.size());
    APP_CUDA(
        cudaMemcpy(offsets.data(), row_offsets.get(), row_offsets.bytes(), cudaMemcpyDeviceToHost));
    unsigned long long total = 0;
    for (std::size_t r = 1; r < offsets.size(); ++r) {
      total += offsets[r];
      if (total > 0xFFFFFFFFull)
        throw std::runtime_error("device_csr: a block has more than 2^32 - 1 nonzeros");
      offsets[r] = static_cast<unsigned>(total);
    }
    nonzeros = total;
    APP_CUDA(
        cudaMemcpy(row_offsets.get(), offsets.data(), row_offsets.bytes(), cudaMemcpyHostToDevice));
    // At least one element each, so that an empty block still has valid pointers.
    columns = std::make_unique<device_array<int>>(total > 0 ? total : 1);
    values = std::make_unique<device_array<double>>(total > 0 ? total : 1);
    fill_entries_kernel<<<blocks, threads>>>(m, rows, cols, row_offsets.get(), columns->get(),
                                             values->get());
    APP_CUDA(cudaGetLastError());
    APP_CUDA(cudaDeviceSynchronize());
  }
  csr_view view() const { return {row_offsets.get(), columns->get(), values->get()}; }

  long long row_count;
  unsigned long long nonzeros = 0;
  device_array<unsigned> row_offsets;
  std::unique_ptr<device_array<int>> columns;
  std::unique_ptr<device_array<double>> values;
};

// This process's piece of the input vector (the first row's; other rows start at zero).
inline void upload_input_piece(const block_layout& layout, int process, std::uint64_t seed,
                               double* device_b) {
  if (layout.grid.row_of(process) != 0) return;
  const index_range cols = layout.cols_of(process);
  std::vector<double> piece(static_cast<std::size_t>(cols.count));
  for (long long i = 0; i < cols.count; ++i) piece[i] = vector_value(seed, cols.begin + i);
  APP_CUDA(
      cudaMemcpy(device_b, piece.data(), piece.size() * sizeof(double), cudaMemcpyHostToDevice));
}

}  // namespace spmv
