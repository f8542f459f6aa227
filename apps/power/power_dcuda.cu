// Power iteration in dcuda (thesis 5.7, figure 5.13): one persistent kernel per GPU, no barrier
// between iterations. Rank i of R owns slice i of its block's rows (and of the partial x) and
// slice i of its column's piece of b (spmv_grid.h, slice); rank 0 of a GPU, its leader, also
// carries the GPU's scalar work (fac, the norm). Rank i of one GPU talks to rank i of the next.
//
// Iteration k, rank i of process (row, col); b_k lives in b buffer k % 2:
//   1. row 0: k > 0: wait for the transpose segments of slice i of b_k (tag t_tag + (k-1) % 2,
//      as many as power_problem.h's segments give). The leader, k > 0: col > 0: wait for fac_k
//      from its parent along the first row (f_tag); then pass fac_k on to its children there
//      (fac_0 is on the first row from the start).
//      row > 0: wait for slice i of b_k from rank i of the column parent (b_tag); for the leader
//      fac_k came just before it, by a plain put from the parent's leader (in order per target).
//      Then, to each column child: the leader puts fac_k into the child's fac, and every rank
//      put_notifies its slice of b_k to rank i of the child (b_tag).
//   2-3. Device barrier (DCUDA_COMM_DEVICE), then x = fac_k (A b_k) for the rank's rows: the
//      product reads the whole piece of b_k, delivered slice by slice to R ranks, and fac_k,
//      delivered to the leader; the barrier orders every rank's delivery before every read (the
//      thesis's device barrier; the normalisation is the product's factor, power_problem.h).
//   4. Reduction of slice i along the row (spmv's protocol, tags r_tag + round).
//   5-6, col 0, in this order:
//   6a. the slice's sum of squares into partials[i] of this GPU, notified to the leader (n_tag;
//      a same-GPU put from the same address: nothing is copied);
//   5. put_notify each transpose segment of x slice i into b buffer (k+1) % 2 of the target rank
//      of the first row (tag t_tag + k % 2);
//   6b. the leader waits for all R partials, adds them (a tree over its threads), adds its column
//      children's sums (nr_tag + round) and sends the total to its parent leader down the first
//      column; process 0's leader sets fac_{k+1}.
//   The norm's chain (6) is what the next device barrier waits for longest, so each rank starts
//   it before its transposes.
// Steps 5-6 of one rank overlap step 1 of others, and the data of step 5 overlaps the scalar
// chain of step 6 (the thesis's 6c/1a overlap).
//
// Why these buffers suffice without a barrier between iterations: every device barrier of
// iteration k+1 (on every GPU) comes after its leader had fac_k, and fac_k needs the norm of the
// whole x of iteration k, i.e. every rank's product and reduction of iteration k everywhere (a
// rank's transposes of iteration k may still be under way; what they read, its own slice of x,
// only its own next product overwrites, after them). Hence:
//   - b: iteration k+1 writes b_{k+2} (buffer k % 2) only from x of iteration k+1, i.e. after a
//     product of iteration k+1, i.e. after every product of iteration k (the last reads of buffer
//     k % 2) -- two buffers by parity suffice; one would not (b_{k+1} is written while products
//     of iteration k still read b_k).
//   - received, partials, the leader's sums, fac: written in iteration k+1 only after a product of
//     k+1, so after their readers of iteration k; one of each suffices.
//   - tags: every tag but the transpose's has one sender per receiver and iteration (in order).
//     A rank of the first row gets transpose segments from several ranks, and those of iteration
//     k+1 may overtake slower ones of iteration k: the tag alternates with the iteration's parity,
//     so a wait counts only its own iteration's segments.
// This relies on puts being complete on return (same GPU and peer GPUs, one node): on
// the network path a put may land later than the notifications that followed it to other ranks.
//
//   mpirun -np 4 --bind-to none build/apps/power/power_dcuda [--n 262144 --row-nonzeros 786]

// One shared copy of the puts, flushes and waits in this kernel, which calls them from many
// places between its loops (src/device/call_linkage.cuh; one H100: 1.918 -> 1.881 ms per
// iteration).
#define DCUDA_CALLS_OUT_OF_LINE

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_resources.h"
#include "dcuda_device.cu.h"
#include "dcuda_host.h"
#include "dcuda_run_figures.h"
#include "mpi_process.h"
#include "power_app.h"
#include "power_kernels.cuh"
#include "power_problem.h"
#include "rank_phase_clock.cuh"

namespace {

using namespace power;
using spmv::process_grid;

constexpr int max_threads_per_rank = 1024;

// Tags: b's slices; fac along the first row; partial norms to the leader; transpose segments
// (t_tag + parity); the row reduction's rounds (r_tag + round); the norm's rounds (nr_tag + round).
constexpr int b_tag = 1, f_tag = 2, n_tag = 3, t_tag = 4, r_tag = 8, nr_tag = 40;

// One allocation holds every vector and scalar a rank puts or receives (one window; every GPU
// has the same layout, so an offset means the same on every GPU). Offsets in doubles.
struct area_layout {
  long long block_rows, block_cols;
  int ranks, reduction_rounds, norm_rounds;

  __host__ __device__ long long b(int parity) const { return parity * block_cols; }
  __host__ __device__ long long y() const { return 2 * block_cols; }
  __host__ __device__ long long received(int round) const { return y() + (1 + round) * block_rows; }
  __host__ __device__ long long partials() const { return received(reduction_rounds); }
  __host__ __device__ long long norm_received(int round) const {
    return partials() + ranks + round;
  }
  __host__ __device__ long long norm_sum() const { return norm_received(norm_rounds); }
  __host__ __device__ long long fac() const { return norm_sum() + 1; }
  __host__ __device__ long long size() const { return fac() + 1; }
};

struct power_data {
  spmv::csr_view a;
  double* area;
  area_layout at;
  block_layout layout;
  int process;
  int warmup, iterations;
  std::uint64_t* phase_ns;  // null, or phase_count values per rank of this GPU (--phases 1)
};

__device__ __noinline__ void rank_multiply(const spmv::csr_view a, const double* b, double* y,
                                           unsigned first, unsigned count, double fac) {
  spmv::multiply_rows(a, b, y, first, count, threadIdx.x / 32, blockDim.x / 32, fac);
}
__device__ __noinline__ void rank_add(double* y, const double* received, unsigned count) {
  spmv::add_into(y, received, count, threadIdx.x, blockDim.x);
}
__device__ __noinline__ double rank_sum_of_squares(const double* x, unsigned count) {
  return block_sum_of_squares(x, count);
}
__device__ __noinline__ double rank_sum(const double* x, unsigned count) {
  return block_sum_of_squares<false>(x, count);
}

__device__ int byte_offset(long long doubles) {
  return static_cast<int>(doubles * static_cast<long long>(sizeof(double)));
}

__global__ void __launch_bounds__(max_threads_per_rank, 1)
    power_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  power_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int local_rank, ranks;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &local_rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &ranks);
  const area_layout at = data->at;
  const block_layout layout = data->layout;
  const process_grid grid = layout.grid;
  const int process = data->process;
  const int row = grid.row_of(process), col = grid.col_of(process);
  const bool leader = local_rank == 0;
  const index_range rows = spmv::slice(at.block_rows, local_rank, ranks);
  const index_range b_part = spmv::slice(at.block_cols, local_rank, ranks);
  const unsigned first_row = static_cast<unsigned>(rows.begin);
  const unsigned row_count = static_cast<unsigned>(rows.count);
  double* area = data->area;
  double* y = area + at.y();
  // World ranks: rank i of process q is q * R + i (every GPU runs R ranks: checked on the host).
  auto partner = [&](int other) { return other * ranks + local_rank; };
  auto leader_of = [&](int other) { return other * ranks; };

  // The transpose segments this rank receives (first row) per iteration.
  int expected_segments = 0;
  if (row == 0) {
    const index_range mine = b_slice(layout, process, local_rank, ranks);
    for_each_transpose_segment(layout, ranks, mine.begin, mine.end(),
                               [&](const transpose_segment&) { ++expected_segments; });
  }

  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, area, byte_offset(at.size()), &win);

  // --phases 1: thread 0 of every rank reads the clock at each boundary below.
  rank_phase_clock clock;
  auto iteration = [&](int k) {
    const int parity = k & 1;
    double* b = area + at.b(parity);
    // 1. b_k and fac_k.
    if (row == 0) {
      if (k > 0 && expected_segments > 0)
        dcuda_wait_notifications(gst, t_tag + (parity ^ 1), expected_segments);
      clock.end(phase_wait);
      // fac_0 is on every GPU of the first row from the start; fac_k (k > 0) comes from
      // process 0, along the first row.
      if (leader && k > 0) {
        if (col > 0) dcuda_wait_notifications(gst, f_tag, 1);
        clock.end(phase_wait);
        for (int step = spmv::broadcast_first_step(col); col + step < grid.cols; step *= 2)
          dcuda_put_notify(gst, win, leader_of(grid.process_at(0, col + step)),
                           byte_offset(at.fac()), 8, area + at.fac(), f_tag);
        clock.end(phase_send);
      }
    } else {
      dcuda_wait_notifications(gst, b_tag, 1);
      clock.end(phase_wait);
    }
    for (int step = spmv::broadcast_first_step(row); row + step < grid.rows; step *= 2) {
      const int child = grid.process_at(row + step, col);
      if (leader) dcuda_put(gst, win, leader_of(child), byte_offset(at.fac()), 8, area + at.fac());
      dcuda_put_notify(gst, win, partner(child), byte_offset(at.b(parity) + b_part.begin),
                       byte_offset(b_part.count), b + b_part.begin, b_tag);
    }
    clock.end(phase_send);
    // 2-3. Every slice of b_k and fac_k are here once every rank of the GPU has arrived.
    dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
    clock.end(phase_barrier);
    rank_multiply(data->a, b, y + first_row, first_row, row_count, area[at.fac()]);
    clock.end(phase_compute);
    // 4. The row reduction (the wait's block barrier orders the product's writes of y first).
    for (int step = 1; spmv::reduction_has_step(col, step, grid.cols); step *= 2) {
      if (col + step >= grid.cols) continue;
      const int round = spmv::log2_of(step);
      dcuda_wait_notifications(gst, r_tag + round, 1);
      clock.end(phase_wait);
      rank_add(y + first_row, area + at.received(round) + first_row, row_count);
      clock.end(phase_compute);
    }
    if (col > 0) {
      const int round = spmv::reduction_send_round(col);
      dcuda_put_notify(gst, win, partner(grid.process_at(row, spmv::reduction_parent(col))),
                       byte_offset(at.received(round) + first_row), byte_offset(row_count),
                       y + first_row, r_tag + round);
      clock.end(phase_send);
      return;
    }
    // 6a. The slice's sum of squares to the leader first: the norm's chain to fac_{k+1} is the
    // longer path to the next device barrier, so it starts before the transposes (measured on one
    // H100: 1.948 against 1.967 ms per iteration). The block barrier: the slice of y was written
    // by all of the rank's warps (no dcuda call stands between the product and this read now).
    __syncthreads();
    const double squares = rank_sum_of_squares(y + first_row, row_count);
    clock.end(phase_compute);
    double* partial = area + at.partials() + local_rank;
    if (threadIdx.x == 0) *partial = squares;
    dcuda_put_notify(gst, win, leader_of(process), byte_offset(at.partials() + local_rank), 8,
                     partial, n_tag);
    clock.end(phase_send);
    // 5. The first column's x slice into the first row's next b (buffer (k+1) % 2).
    const index_range mine = x_slice(layout, process, local_rank, ranks);
    const long long x_origin = layout.rows_of(process).begin;
    for_each_transpose_segment(
        layout, ranks, mine.begin, mine.end(), [&](const transpose_segment& segment) {
          const long long b_origin = layout.cols_of(segment.target_process).begin;
          dcuda_put_notify(gst, win, segment.target_process * ranks + segment.target_rank,
                           byte_offset(at.b(parity ^ 1) + segment.global_begin - b_origin),
                           byte_offset(segment.count), y + (segment.global_begin - x_origin),
                           t_tag + parity);
        });
    clock.end(phase_send);
    // 6b. The leader: the GPU's sum, the leaders' sums down the first column, fac_{k+1}.
    if (!leader) return;
    dcuda_wait_notifications(gst, n_tag, ranks);
    clock.end(phase_wait);
    double* sum = area + at.norm_sum();
    // All the leader's threads add the partials (thread 0 alone: a chain of R loads that every
    // rank of the GPU would wait for in the next device barrier).
    const double total = rank_sum(area + at.partials(), static_cast<unsigned>(ranks));
    if (threadIdx.x == 0) *sum = total;
    clock.end(phase_compute);
    for (int step = 1; spmv::reduction_has_step(row, step, grid.rows); step *= 2) {
      if (row + step >= grid.rows) continue;
      const int round = spmv::log2_of(step);
      dcuda_wait_notifications(gst, nr_tag + round, 1);
      clock.end(phase_wait);
      if (threadIdx.x == 0) *sum += area[at.norm_received(round)];
    }
    if (row > 0) {
      const int round = spmv::reduction_send_round(row);
      dcuda_put_notify(gst, win, leader_of(grid.process_at(spmv::reduction_parent(row), 0)),
                       byte_offset(at.norm_received(round)), 8, sum, nr_tag + round);
      clock.end(phase_send);
    } else if (threadIdx.x == 0) {
      area[at.fac()] = 1.0 / sqrt(*sum);  // read after the next dcuda call's block barrier
    }
  };

  int k = 0;
  for (; k < data->warmup; ++k) iteration(k);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_start_cpu_timer(gst);
  clock.start(data->phase_ns != nullptr);
  for (; k < data->warmup + data->iterations; ++k) iteration(k);
  clock.store(data->phase_ns + local_rank * phase_count);
  // The last iteration's transposes complete the result b_K.
  if (row == 0 && k > 0 && expected_segments > 0)
    dcuda_wait_notifications(gst, t_tag + ((k - 1) & 1), expected_segments);
  dcuda_stop_cpu_timer(gst);

  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

int run(int argc, char** argv) {
  // MPI first, so that the result check and the report can use it also when the program runs as
  // one process without mpirun (dcuda_host_init then finds it initialised and uses it).
  mpi_session session(argc, argv, false);
  const app_options options = parse_options(argc, argv, "power_dcuda", max_threads_per_rank);
  const run_setup setup = spmv::setup_from(options, session.size());
  const block_layout& layout = setup.layout;
  dcuda_host_context_handle dcuda;
  dcuda_host_init(argc, argv, &dcuda, power_kernel, setup.threads);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(dcuda, &info);

  require_equal_ranks_per_gpu(info.rank_responsible);
  const int ranks = info.rank_responsible;
  if (layout.block_rows() < ranks || layout.block_cols() < ranks)
    throw std::invalid_argument("a block of " + std::to_string(layout.block_rows()) + " x " +
                                std::to_string(layout.block_cols()) + " gives some of the " +
                                std::to_string(ranks) +
                                " ranks of a GPU no rows or no part of b; use a larger --n or "
                                "fewer ranks");
  const area_layout at{layout.block_rows(), layout.block_cols(), ranks,
                       spmv::tree_rounds(layout.grid.cols), spmv::tree_rounds(layout.grid.rows)};
  if (at.size() * static_cast<long long>(sizeof(double)) > INT_MAX)
    throw std::invalid_argument("the vectors of " + std::to_string(at.size() * 8) +
                                " bytes exceed a dcuda window (at most 2^31 - 1 bytes)");

  int status = 0;
  {
    const int process = info.process_index;
    const spmv::device_csr a(setup.matrix, layout.rows_of(process), layout.cols_of(process));
    device_array<double> area(static_cast<std::size_t>(at.size()));
    // The state a run starts from (--runs): b_0 in buffer 0 and fac_0 on the first row, the
    // rest zero; elsewhere both arrive in iteration 0.
    const std::vector<double> start = initial_piece(setup, process);
    const double fac0 = layout.grid.row_of(process) == 0 ? initial_fac(setup) : 0.0;
    const auto load_input = [&] {
      area.clear();
      APP_CUDA(cudaMemcpy(area.get() + at.b(0), start.data(), start.size() * sizeof(double),
                          cudaMemcpyHostToDevice));
      APP_CUDA(cudaMemcpy(area.get() + at.fac(), &fac0, sizeof(double), cudaMemcpyHostToDevice));
      APP_CUDA(cudaDeviceSynchronize());
    };
    load_input();
    dcuda_host_share_memory(dcuda, area.get());
    const bool phases = options.get("phases") != 0;
    device_array<std::uint64_t> phase_ns(phases ? ranks * phase_count : 0);
    power_data data{a.view(),
                    area.get(),
                    at,
                    layout,
                    process,
                    setup.warmup,
                    setup.iterations,
                    phases ? phase_ns.get() : nullptr};

    const int total = setup.warmup + setup.iterations;
    status = each_run(options, load_input, [&] {
      dcuda_host_run(dcuda, &data, sizeof(data));
      print_rank_phases(phase_ns, process, setup.iterations);
      double fac = 0;
      APP_CUDA(cudaMemcpy(&fac, area.get() + at.fac(), sizeof(double), cudaMemcpyDeviceToHost));
      return check_and_report(options, setup, dcuda_run_figures(dcuda, info),
                              area.get() + at.b(total & 1), fac);
    });
  }
  dcuda_host_finish(dcuda);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return run_or_abort("power_dcuda", [&] { return run(argc, argv); });
}
