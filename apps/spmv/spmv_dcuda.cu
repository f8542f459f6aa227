// spmv in dcuda (thesis 5.6): one persistent kernel per GPU. Rank i of R owns slice i of its
// block's rows (the matching slice of the partial result y) and slice i of its column's piece of
// b (spmv_grid.h, slice). The broadcast and the reduction go rank to rank: rank i of a GPU sends
// its slice to rank i of the next GPU in the tree, so a rank forwards or reduces its slice as soon
// as its own part is done, while other ranks still multiply.
//
// Protocol of one iteration, rank i of process (row, col):
//   1. row > 0: wait for one notification b_tag (rank i of the column parent put slice i of b).
//      Then put_notify slice i of b to rank i of each column child (b_tag), in tree order.
//   2. row > 0: device barrier (dcuda_comm_barrier on DCUDA_COMM_DEVICE). Why: the product
//      reads the whole piece of b, delivered slice by slice to R different ranks; each rank passes
//      the barrier only after every rank of its GPU has consumed its slice's notification, and the
//      barrier (release/acquire) makes every slice visible to every rank. The alternative, every
//      rank notifying all R ranks of its GPU, costs R^2 notifications per GPU. Row 0 owns b and
//      skips steps 1-2 (every rank of a GPU decides alike, so the barrier stays collective).
//   3. y[slice i] = A[slice i rows] b.
//   4. for each reduction child (col + s, s = 1, 2, ...): wait for one notification
//      reduce_tag + log2(s) (rank i of that child put its slice of partial sums into received
//      round log2(s)), add it into y[slice i]. Then col > 0: put_notify y[slice i] into the
//      parent's received round (reduce_tag + that round).
//   5. world barrier (dcuda_comm_barrier on DCUDA_COMM_WORLD): the thesis's global barrier.
//
// Buffer reuse across iterations: every buffer written by a put (b of rows > 0, the received
// rounds) is written in iteration k+1 only after the writer passed barrier k, i.e. after every
// rank everywhere finished iteration k, including the reads of that buffer (the product reading
// b, the additions reading received). The world barrier is therefore the only protection needed;
// no double buffering. Each tag has at most one notification in flight per rank per iteration.
//
// Windows: all ranks of a GPU give the same bases (b, and [y | received rounds]), so a slice's
// offset is the same on every GPU; the puts only ever go to other GPUs (peer path over NVLink).
//
//   mpirun -np 4 --bind-to none build/apps/spmv/spmv_dcuda [--n 262144 --row-nonzeros 786]

// One shared copy of the puts, flushes and waits in this kernel, which calls them from many
// places between its loops (src/device/call_linkage.cuh; one H100: 1.895 -> 1.876 ms per
// iteration).
#define DCUDA_CALLS_OUT_OF_LINE

#include <climits>
#include <stdexcept>
#include <string>

#include "cuda_resources.h"
#include "dcuda_device.cu.h"
#include "dcuda_host.h"
#include "dcuda_run_figures.h"
#include "mpi_process.h"
#include "rank_phase_clock.cuh"
#include "spmv_app.h"
#include "spmv_kernels.cuh"
#include "spmv_tree.h"

namespace {

using namespace spmv;

constexpr int max_threads_per_rank = 1024;

// Tags: b's slices; the reduction's rounds (reduce_tag + round, round < 31).
constexpr int b_tag = 1, reduce_tag = 2;

struct spmv_data {
  csr_view a;
  double* b;          // the column's piece of b (block_cols)
  double* reduction;  // y (block_rows), then one receive area of block_rows per reduction round
  unsigned block_rows, block_cols;
  process_grid grid;
  int process;
  int warmup, iterations;
  std::uint64_t* phase_ns;  // null, or phase_count values per rank of this GPU (--phases 1)
};

// The product of the rank's rows, a function of its own so that it gets the registers to itself
// (the kernel's dcuda calls keep many values live).
__device__ __noinline__ void rank_multiply(const csr_view a, const double* b, double* y,
                                           unsigned first, unsigned count) {
  multiply_rows(a, b, y, first, count, threadIdx.x / 32, blockDim.x / 32);
}
__device__ __noinline__ void rank_add(double* y, const double* received, unsigned count) {
  add_into(y, received, count, threadIdx.x, blockDim.x);
}

__global__ void __launch_bounds__(max_threads_per_rank, 1) spmv_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  spmv_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int local_rank, ranks;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &local_rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &ranks);
  const process_grid grid = data->grid;
  const int row = grid.row_of(data->process), col = grid.col_of(data->process);
  const index_range rows = slice(data->block_rows, local_rank, ranks);
  const index_range b_part = slice(data->block_cols, local_rank, ranks);
  const unsigned first_row = static_cast<unsigned>(rows.begin);
  const unsigned row_count = static_cast<unsigned>(rows.count);
  // Rank i of process q is world rank q * R + i (every GPU runs R ranks: checked on the host).
  auto partner = [&](int grid_row, int grid_col) {
    return grid.process_at(grid_row, grid_col) * ranks + local_rank;
  };

  double* y = data->reduction;
  double* received = data->reduction + data->block_rows;  // round t at t * block_rows
  const int rounds = tree_rounds(grid.cols);
  dcuda_win b_window, reduction_window;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->b, static_cast<int>(data->block_cols * 8),
                   &b_window);
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->reduction,
                   static_cast<int>((1 + rounds) * static_cast<long long>(data->block_rows) * 8),
                   &reduction_window);

  // --phases 1: thread 0 of every rank reads the clock at each boundary below.
  rank_phase_clock clock;
  auto iteration = [&] {
    if (row > 0) dcuda_wait_notifications(gst, b_tag, 1);
    clock.end(phase_wait);
    for (int step = broadcast_first_step(row); row + step < grid.rows; step *= 2)
      dcuda_put_notify(gst, b_window, partner(row + step, col), static_cast<int>(b_part.begin * 8),
                       static_cast<int>(b_part.count * 8), data->b + b_part.begin, b_tag);
    clock.end(phase_send);
    if (row > 0) dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
    clock.end(phase_barrier);
    rank_multiply(data->a, data->b, y + first_row, first_row, row_count);
    clock.end(phase_compute);
    for (int step = 1; reduction_has_step(col, step, grid.cols); step *= 2) {
      if (col + step >= grid.cols) continue;
      const int round = log2_of(step);
      // Its block barrier also orders the product's writes of y before the additions.
      dcuda_wait_notifications(gst, reduce_tag + round, 1);
      clock.end(phase_wait);
      rank_add(y + first_row,
               received + static_cast<long long>(round) * data->block_rows + first_row, row_count);
      clock.end(phase_compute);
    }
    if (col > 0) {
      const int round = reduction_send_round(col);
      const long long offset = (1 + round) * static_cast<long long>(data->block_rows) + first_row;
      dcuda_put_notify(gst, reduction_window, partner(row, reduction_parent(col)),
                       static_cast<int>(offset * 8), static_cast<int>(row_count * 8), y + first_row,
                       reduce_tag + round);
    }
    // A large put through the network path keeps its source until the proxy has copied it; the
    // world barrier waits for every delivery anyway, flush states the intent.
    dcuda_win_flush(gst, reduction_window);
    dcuda_win_flush(gst, b_window);
    clock.end(phase_send);
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
    clock.end(phase_barrier);
  };

  for (int t = 0; t < data->warmup; ++t) iteration();
  dcuda_start_cpu_timer(gst);
  clock.start(data->phase_ns != nullptr);
  for (int t = 0; t < data->iterations; ++t) iteration();
  clock.store(data->phase_ns + local_rank * phase_count);
  dcuda_stop_cpu_timer(gst);

  dcuda_win_free(gst, reduction_window);
  dcuda_win_free(gst, b_window);
  dcuda_gpu_finish(gst);
}

int run(int argc, char** argv) {
  // MPI first, so that the result check and the report can use it also when the program runs as
  // one process without mpirun (dcuda_host_init then finds it initialised and uses it).
  mpi_session session(argc, argv, false);
  const app_options options = parse_options(argc, argv, "spmv_dcuda", max_threads_per_rank);
  const run_setup setup = setup_from(options, session.size());
  const block_layout& layout = setup.layout;
  dcuda_host_context_handle dcuda;
  dcuda_host_init(argc, argv, &dcuda, spmv_kernel, setup.threads);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(dcuda, &info);

  require_equal_ranks_per_gpu(info.rank_responsible);
  if (layout.block_rows() < info.rank_responsible || layout.block_cols() < info.rank_responsible)
    throw std::invalid_argument("a block of " + std::to_string(layout.block_rows()) + " x " +
                                std::to_string(layout.block_cols()) + " gives some of the " +
                                std::to_string(info.rank_responsible) +
                                " ranks of a GPU no rows or no part of b; use a larger --n or "
                                "fewer ranks");
  const long long rounds = tree_rounds(layout.grid.cols);
  if ((1 + rounds) * layout.block_rows() * 8 > INT_MAX || layout.block_cols() * 8 > INT_MAX)
    throw std::invalid_argument("a vector window exceeds a dcuda window (at most 2^31 - 1 bytes)");

  int status = 0;
  {
    const int process = info.process_index;
    const device_csr a(setup.matrix, layout.rows_of(process), layout.cols_of(process));
    device_array<double> b(static_cast<std::size_t>(layout.block_cols()));
    device_array<double> reduction(static_cast<std::size_t>((1 + rounds) * layout.block_rows()));
    // The state a run starts from (--runs): b of the first process row, everything else zero.
    const auto load_input = [&] {
      b.clear();
      reduction.clear();
      upload_input_piece(layout, process, setup.seed, b.get());
      APP_CUDA(cudaDeviceSynchronize());
    };
    load_input();
    dcuda_host_share_memory(dcuda, b.get());
    dcuda_host_share_memory(dcuda, reduction.get());
    const bool phases = options.get("phases") != 0;
    device_array<std::uint64_t> phase_ns(phases ? info.rank_responsible * phase_count : 0);
    spmv_data data{a.view(),
                   b.get(),
                   reduction.get(),
                   static_cast<unsigned>(layout.block_rows()),
                   static_cast<unsigned>(layout.block_cols()),
                   layout.grid,
                   process,
                   setup.warmup,
                   setup.iterations,
                   phases ? phase_ns.get() : nullptr};
    status = each_run(options, load_input, [&] {
      dcuda_host_run(dcuda, &data, sizeof(data));
      print_rank_phases(phase_ns, process, setup.iterations);
      return check_and_report(options, setup, dcuda_run_figures(dcuda, info), reduction.get());
    });
  }
  dcuda_host_finish(dcuda);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return run_or_abort("spmv_dcuda", [&] { return run(argc, argv); });
}
